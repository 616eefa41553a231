// A private PostgreSQL cluster for fault tests: its own data folder and a free port on 127.0.0.1, created with
// initdb and started and stopped with pg_ctl, so a test can take the database away without touching anyone
// else's server. initdb refuses to run as root: as root, the tools run as the `postgres` user.
import { execFile, spawnSync } from 'node:child_process';
import { chown, mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const asRoot = process.getuid?.() === 0;

/** How a tool is invoked: directly, or through runuser as `postgres` when we are root. */
function command(tool: string, args: string[]): [string, string[]] {
  return asRoot ? ['runuser', ['-u', 'postgres', '--', tool, ...args]] : [tool, args];
}

/** Null when a cluster can be made here; otherwise why not (the fault test is then skipped). */
export const pgClusterUnavailable: string | null = (() => {
  const [cmd, args] = command('initdb', ['--version']);
  const probe = spawnSync(cmd, args, { encoding: 'utf8' });
  if (probe.error || probe.status !== 0) return `initdb is not runnable${asRoot ? ' as postgres' : ''}: ${probe.error?.message ?? probe.stderr.trim()}`;
  return null;
})();

export interface PgCluster {
  /** A superuser URL (trust authentication) for the cluster's `postgres` database. */
  url: string;
  port: number;
  /** Stops the server: `immediate` is a crash (no checkpoint, every connection cut). */
  stop(mode?: 'immediate' | 'fast'): Promise<void>;
  start(): Promise<void>;
  /** Stops the server if it runs and deletes the folder. */
  destroy(): Promise<void>;
}

export async function createPgCluster(): Promise<PgCluster> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ars-pg-'));
  if (asRoot) {
    const { stdout } = await run('id', ['-u', 'postgres']);
    const { stdout: gid } = await run('id', ['-g', 'postgres']);
    await chown(dir, Number(stdout.trim()), Number(gid.trim()));
  }
  const data = path.join(dir, 'data');
  const port = await freePort();
  const tool = (name: string, args: string[]) => run(...command(name, args), { timeout: 60_000 });
  await tool('initdb', ['-D', data, '-U', 'postgres', '-A', 'trust', '-E', 'UTF8', '--no-sync']);
  const options = `-p ${port} -c listen_addresses=127.0.0.1 -c unix_socket_directories=${dir} -c fsync=off`;
  const start = async () => void (await tool('pg_ctl', ['-D', data, '-l', path.join(dir, 'server.log'), '-o', options, '-w', 'start']));
  const stop = async (mode: 'immediate' | 'fast' = 'fast') => void (await tool('pg_ctl', ['-D', data, '-m', mode, '-w', 'stop']));
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    stop,
    start,
    async destroy() {
      await stop('immediate').catch(() => {}); // already stopped is fine
      await rm(dir, { recursive: true, force: true });
    },
  };
}

/** A port nobody listens on right now (the kernel's pick for port 0). */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => server.once('error', reject).listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
