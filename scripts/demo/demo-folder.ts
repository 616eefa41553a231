// The demo's own folder (.ars-demo/, gitignored): its PGlite data, the service log and the printed exports. It is
// wiped at each start so every demo begins from the same state, and it is the only place the demo writes.
import { mkdir, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** Written at creation: only a folder holding it is ever wiped (ARS_DEMO_DIR might name something else). */
const MARKER = 'MADE-BY-NPM-RUN-DEMO';
const PID_FILE = 'demo.pid';

export interface DemoFolder {
  dir: string;
  dataDir: string;
  logFile: string;
  envFile: string;
  /** Forgets this process (the pid file), once everything is stopped. */
  release(): Promise<void>;
}

/** Empties (or creates) the folder; refuses one the demo did not make, and one a running demo still uses. */
export async function freshDemoFolder(dir: string): Promise<DemoFolder> {
  const entries: string[] = await readdir(dir).catch((err: NodeJS.ErrnoException) => {
    if (err.code === 'ENOENT') return [];
    throw err;
  });
  if (entries.length > 0 && !entries.includes(MARKER)) {
    throw new Error(`${dir} is not empty and was not made by the demo; it is left alone (set ARS_DEMO_DIR to another folder)`);
  }
  const pid = Number(await readFile(path.join(dir, PID_FILE), 'utf8').catch(() => ''));
  if (pid > 0 && pid !== process.pid && isAlive(pid)) throw new Error(`another demo (pid ${pid}) is using ${dir}: stop it first`);

  await rm(dir, { recursive: true, force: true });
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await writeFile(path.join(dir, MARKER), 'Made by `npm run demo`, and emptied at each of its starts.\n');
  await writeFile(path.join(dir, PID_FILE), `${process.pid}\n`);
  return {
    dir,
    dataDir: path.join(dir, 'data'),
    logFile: path.join(dir, 'service.log'),
    envFile: path.join(dir, 'demo.env'),
    release: () => rm(path.join(dir, PID_FILE), { force: true }),
  };
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0); // signal 0: only asks whether the process exists
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}
