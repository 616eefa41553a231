// Starts the harness (harness/serve.ts) once for the whole browser suite and stops it after: the console is
// built first if it is not (the service serves console/dist), then the service and its stand-ins come up on a
// real port and the seed is written where the specs read it.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(import.meta.dirname, '../..');

export default async function globalSetup(): Promise<() => Promise<void>> {
  if (!existsSync(path.join(ROOT, 'console/dist/index.html'))) {
    const build = spawnSync('npm', ['run', '--silent', 'console:build'], { cwd: ROOT, stdio: 'inherit' });
    if (build.status !== 0) throw new Error('npm run console:build failed');
  }
  const dir = await mkdtemp(path.join(tmpdir(), 'ars-browser-fixture-'));
  const fixtureFile = path.join(dir, 'fixture.json');
  process.env.ARS_BROWSER_FIXTURE = fixtureFile;
  const child = spawn(process.execPath, ['--import', 'tsx', 'test/browser/harness/serve.ts'], {
    cwd: ROOT,
    env: { ...process.env, ARS_BROWSER_FIXTURE: fixtureFile },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  const deadline = Date.now() + 120_000;
  while (!existsSync(fixtureFile)) {
    if (child.exitCode !== null) throw new Error(`the browser harness exited (${child.exitCode}) before it was ready`);
    if (Date.now() > deadline) throw new Error('the browser harness was not ready within 120 s');
    await new Promise((r) => setTimeout(r, 200));
  }
  return async () => {
    child.kill('SIGTERM');
    await new Promise((r) => child.once('exit', r));
  };
}
