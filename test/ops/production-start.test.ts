// Issue 37 items 1 and 4, with real processes: `npm start` runs the production build — plain `node` on dist/, no
// tsx or compiler at run time (the process tree is npm → node, nothing below) — and SIGTERM or SIGINT sent to
// whatever `npm start` started, npm itself included, drains (decisions.md "Shutdown": the "shutting down" and
// "stopped" lines), exits 0 and frees the port. dist/ is built first when it is missing or older than src/
// (`npm run build`'s service half; CI's `npm ci` builds it through `prepare`).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../faults/service-process.ts';
import { childrenOf, commandLineOf, isAlive, portIsFree, ROOT, run, runToExit, waitForReady, type Proc } from './processes.ts';

function newest(p: string): number {
  const s = statSync(p);
  return s.isDirectory() ? Math.max(0, ...readdirSync(p).map((n) => newest(path.join(p, n)))) : s.mtimeMs;
}

let dataDir: string;
const masterKey = randomBytes(32).toString('base64');
const adminToken = `prod_admin_${randomBytes(24).toString('hex')}`;

beforeAll(async () => {
  const built = path.join(ROOT, 'dist', 'server.js');
  if (!existsSync(built) || statSync(built).mtimeMs < newest(path.join(ROOT, 'src'))) {
    const build = spawnSync(process.execPath, ['--import', 'tsx', 'scripts/build.ts', 'service'], { cwd: ROOT, stdio: 'inherit' });
    expect(build.status).toBe(0);
  }
  dataDir = await mkdtemp(path.join(tmpdir(), 'ars-prod-'));
}, 180_000);
afterAll(async () => {
  await rm(dataDir, { recursive: true, force: true });
});

/** `npm start` on PGlite in the shared data folder; resolves once /readyz answers, with npm's one child. */
async function npmStart(): Promise<{ npm: Proc; port: number; node: number }> {
  const port = await freePort();
  const npm = run('npm', ['start'], {
    HOST: '127.0.0.1', PORT: String(port), ARS_DATA_DIR: dataDir, ARS_MASTER_KEY: masterKey, ARS_ADMIN_TOKEN: adminToken,
  });
  await waitForReady(`http://127.0.0.1:${port}`, npm);
  const children = childrenOf(npm.child.pid!);
  expect(children).toHaveLength(1);
  return { npm, port, node: children[0]! };
}

describe('npm start runs the built service under plain node', () => {
  it('npm → node dist/server.js, with no shell, tsx or esbuild in between or below; SIGTERM to npm drains and exits 0', async () => {
    const { npm, port, node } = await npmStart();
    expect(commandLineOf(node)).toBe('node dist/server.js');
    expect(childrenOf(node)).toEqual([]); // no esbuild service, no worker process
    const res = await fetch(`http://127.0.0.1:${port}/api/admin/orgs`, {
      method: 'POST', headers: { authorization: `Bearer ${adminToken}`, 'content-type': 'application/json' }, body: '{"name":"Built"}',
    });
    expect(res.status).toBe(201);

    npm.child.kill('SIGTERM'); // what `docker stop` does to `CMD npm start`
    const { code, output } = await runToExit(npm);
    expect(code).toBe(0);
    expect(isAlive(node)).toBe(false);
    const lines = output.split('\n').filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as { msg: string; signal?: string });
    expect(lines.find((l) => l.msg === 'shutting down')?.signal).toBe('SIGTERM');
    expect(lines.at(-1)?.msg).toBe('stopped');
    expect(await portIsFree(port)).toBe(true);
  }, 150_000);

  it('SIGINT to the node process npm started drains too, and npm exits 0 with it', async () => {
    const { npm, port, node } = await npmStart();
    process.kill(node, 'SIGINT');
    const { code, output } = await runToExit(npm);
    expect(code).toBe(0);
    expect(isAlive(node)).toBe(false);
    expect(output).toMatch(/"signal":"SIGINT".*"msg":"shutting down"/);
    expect(output).toMatch(/"msg":"stopped"/);
    expect(await portIsFree(port)).toBe(true);
  }, 150_000);

  it('SIGINT to npm (Ctrl-C reaches the whole group; npm alone here) drains and exits 0', async () => {
    const { npm, port, node } = await npmStart();
    npm.child.kill('SIGINT');
    const { code, output } = await runToExit(npm);
    expect(code).toBe(0);
    expect(isAlive(node)).toBe(false);
    expect(output).toMatch(/"signal":"SIGINT".*"msg":"shutting down"/);
    expect(await portIsFree(port)).toBe(true);
  }, 150_000);
});
