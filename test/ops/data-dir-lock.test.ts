// Issue 37 item 5, one writer per embedded database (decisions.md "One process per data folder"): real processes.
// A second service on the same ARS_DATA_DIR refuses to start with one line naming the folder and the holder, and
// the first keeps its data; after kill -9 the lock it leaves is taken over by the next start, which finds the data;
// `npm run migrate` refuses too while the service runs; starters racing for one stale lock: exactly one wins.
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ServiceProcess } from '../faults/service-process.ts';
import { LOCK_FILE, lockDataDir } from '../../src/storage/data-dir-lock.ts';
import { StartupError } from '../../src/lib/startup-error.ts';
import { TEST_DATABASE_URL } from '../helpers/test-db.ts';
import { hasStackTrace, run, runService, runToExit, type Proc } from './processes.ts';

// Processes started through tsx: seconds each, more on a loaded machine.
vi.setConfig({ testTimeout: 90_000 });

const dirs: string[] = [];
async function freshDir(): Promise<string> {
  const dir = await mkdtemp(path.join(tmpdir(), 'ars-lock-'));
  dirs.push(dir);
  return dir;
}
afterAll(async () => {
  for (const dir of dirs) await rm(dir, { recursive: true, force: true });
});

/** A process holding the lock, killed with -9: it leaves `ars.lock` behind with nothing listening on it. */
async function staleLock(dir: string): Promise<void> {
  const holder = lockHolder(dir);
  await until(() => holder.output().includes('locked'), holder);
  holder.child.kill('SIGKILL');
  await holder.exited;
  expect((await stat(path.join(dir, LOCK_FILE))).isSocket()).toBe(true);
}

function lockHolder(dir: string): Proc {
  return run(process.execPath, ['--import', 'tsx', 'test/ops/lock-holder.ts', dir], {});
}

async function until(done: () => boolean, proc: Proc, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!done()) {
    if (proc.child.exitCode !== null || Date.now() > deadline) throw new Error(`not there:\n${proc.output()}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

// The embedded database only: CI's PostgreSQL pass (TEST_DATABASE_URL) would run the very same processes again.
describe.skipIf(TEST_DATABASE_URL)('the lock (src/storage/data-dir-lock.ts) between processes', () => {
  it('a live holder makes the next taker refuse, naming it; once it is killed -9 the lock is taken over', async () => {
    const dir = await freshDir();
    const first = lockHolder(dir);
    await until(() => first.output().includes('locked'), first);
    const refused = await lockDataDir(dir).then(() => null, (err: unknown) => err);
    expect(refused).toBeInstanceOf(StartupError);
    expect((refused as Error).message).toContain(`ARS_DATA_DIR ${dir} is in use by another process of this service (pid ${first.child.pid} on host `);

    first.child.kill('SIGKILL');
    await first.exited;
    const said: string[] = [];
    const lock = await lockDataDir(dir, (line) => said.push(line));
    expect(said).toEqual([`ARS_DATA_DIR ${dir}: taking over the lock of a process that has ended`]);
    await lock.release();
    // Released: the file is gone and the next taker says nothing.
    await expect(stat(path.join(dir, LOCK_FILE))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('three starters racing for one stale lock: exactly one holds it, the others name it', async () => {
    const dir = await freshDir();
    await staleLock(dir);
    const racers = [lockHolder(dir), lockHolder(dir), lockHolder(dir)];
    // Each either holds the lock (and stays) or has refused (exit 2); wait until all three have decided.
    const decided = (p: Proc) => p.output().includes('locked') || p.child.exitCode !== null;
    const deadline = Date.now() + 60_000;
    while (!racers.every(decided) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    const holders = racers.filter((p) => p.output().includes('\nlocked') || p.output().startsWith('locked'));
    // A racer that first thought it had won must have noticed it lost before saying "locked".
    expect(holders).toHaveLength(1);
    const winner = holders[0]!;
    for (const p of racers.filter((r) => r !== winner)) {
      expect(await p.exited).toEqual({ code: 2, signal: null });
      expect(p.output()).toContain(`is in use by another process of this service (pid ${winner.child.pid} `);
    }
    winner.child.kill('SIGKILL');
    await winner.exited;
  }, 90_000);

  it('a folder that cannot be created is one line naming ARS_DATA_DIR', async () => {
    const file = path.join(await freshDir(), 'a-file');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, 'not a folder'));
    const err = await lockDataDir(path.join(file, 'data')).then(() => null, (e: unknown) => e);
    expect(err).toBeInstanceOf(StartupError);
    expect((err as Error).message).toMatch(/^ARS_DATA_DIR .* cannot be created \(ENOTDIR\)/);
  });

  it('a folder whose path is too long for a socket address still locks (bound from inside the folder)', async () => {
    const dir = path.join(await freshDir(), 'x'.repeat(60), 'y'.repeat(60));
    const lock = await lockDataDir(dir);
    const refused = await lockDataDir(dir).then(() => null, (err: unknown) => err);
    expect(refused).toBeInstanceOf(StartupError);
    await lock.release();
    await (await lockDataDir(dir)).release();
  });
});

describe.skipIf(TEST_DATABASE_URL)('the service on one data folder', () => {
  const masterKey = randomBytes(32).toString('base64');
  let dir: string;
  let first: ServiceProcess;
  beforeAll(async () => {
    if (TEST_DATABASE_URL) return;
    dir = await freshDir();
    first = new ServiceProcess({ ARS_DATA_DIR: dir, ARS_MASTER_KEY: masterKey });
    await first.start();
  }, 120_000);
  afterAll(async () => {
    await first?.stop();
  });

  it('a second process refuses to start, one line, exit 2; the first keeps answering with its data', async () => {
    const org = await first.api('POST', '/api/admin/orgs', { name: 'Only writer' });
    expect(org.status).toBe(201);
    const second = await runToExit(runService({ ARS_DATA_DIR: dir, ARS_MASTER_KEY: masterKey, PORT: '0' }));
    expect(second.code).toBe(2);
    expect(second.output.trim().split('\n')).toHaveLength(1);
    expect(second.output).toMatch(new RegExp(`^cannot start: ARS_DATA_DIR ${dir} is in use by another process of this service \\(pid \\d+ on host .+, since .+\\): an embedded database takes one process`));
    expect(hasStackTrace(second.output)).toBe(false);
    // `npm run migrate` (its CLI) is a writer too.
    const migrate = await runToExit(run(process.execPath, ['--import', 'tsx', 'src/storage/migrate-cli.ts'], { ARS_DATA_DIR: dir }));
    expect(migrate.code).toBe(2);
    expect(migrate.output).toContain(`ARS_DATA_DIR ${dir} is in use by another process of this service`);
    expect((await first.api('GET', `/api/admin/orgs/${org.json.id}`)).status).toBe(200);
  }, 90_000);

  it('after kill -9 the next start takes the stale lock over and finds what the first wrote', async () => {
    const org = await first.api('POST', '/api/admin/orgs', { name: 'Survives kill -9' });
    expect(org.status).toBe(201);
    await first.kill9();
    first = new ServiceProcess({ ARS_DATA_DIR: dir, ARS_MASTER_KEY: masterKey });
    await first.start();
    expect(first.logs).toContain(`ARS_DATA_DIR ${dir}: taking over the lock of a process that has ended`);
    const again = await first.api('GET', `/api/admin/orgs/${org.json.id}`);
    expect(again.status).toBe(200);
    expect(again.json.name).toBe('Survives kill -9');
  }, 150_000); // a PGlite start: slow on a loaded machine
});

