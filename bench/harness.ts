// Starts the bench's processes and owns the database: the runtime fakes, the service host (service + baselines),
// a second service host on the same PostgreSQL database when BENCH_DATABASE_URL is set, and the load generator.
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startChild, type ChildHandle } from './ipc.ts';
import type { HostInit } from './service-host.ts';
import type { FakeUrls, HostProfile, MemorySample, Seeded, WakeItem } from './types.ts';
import { AGENT_CACHE_ENTRIES } from '../src/agents/agent-directory.ts';

export interface Instance {
  host: ChildHandle;
  service: string;
  baseline: string;
}

export interface Harness {
  fakes: ChildHandle;
  load: ChildHandle;
  primary: Instance;
  /** A second instance on the same database (PostgreSQL only). */
  secondary: Instance | null;
  fakeUrls: FakeUrls;
  seeded: Seeded;
  dbLabel: string;
  /** Set by a scenario before it runs the load generator's `wake` job. */
  wakePlan: (args: { dispatched: number }) => Promise<{ origin: string; items: WakeItem[] }>;
  prepare: (key: string) => Promise<void>;
  call<T>(h: ChildHandle, method: string, args?: unknown): Promise<T>;
  profile<T>(inst: Instance, fn: () => Promise<T>): Promise<{ result: T; profile: HostProfile }>;
  memory(inst: Instance): Promise<MemorySample>;
  close(): Promise<void>;
}

/**
 * `wake`: 1,000 held waits in each of the callback-to-wake figure's four rounds, fresh agents each (sync-wait.ts).
 *
 * `progress`: /callback's own agents. Each may report 20 times a minute (spec 8.1) and each side keeps its own count,
 * so they must outnumber a side's requests per minute / 20: a side loads about 3 s of every 8 (alternating windows
 * and their settles), so at 5,400 requests a second (the same-work route on a fast machine) that is 6,100 agents.
 * With 5,000 (the task agents it shared) the route answered 2.5% of its callbacks 404, over its limit, and the
 * figure was void. 9,000 leaves half again as much, and keeps every agent the bench seeds within the service's
 * agent cache, so no figure meets a cache emptied in its middle (startHarness checks it).
 */
export const SEED = { task: 5_000, progress: 9_000, wake: 4_000, workflow: 600, download: 8 };
/** Every agent the bench seeds: SEED's and the one hammered past its limit (seed.ts). */
const SEEDED_AGENTS = Object.values(SEED).reduce((a, b) => a + b, 0) + 1;

async function adminQuery(url: string, sql: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

export async function startHarness(opts: { databaseUrl: string | null; pgliteOnDisk: boolean; logLevel: string }): Promise<Harness> {
  // Past it the service's agent cache empties itself mid-run, and a figure would measure its refilling.
  if (SEEDED_AGENTS > AGENT_CACHE_ENTRIES) throw new Error(`the bench seeds ${SEEDED_AGENTS} agents, more than the service's agent cache holds (${AGENT_CACHE_ENTRIES})`);
  const children: ChildHandle[] = [];
  const cleanups: Array<() => Promise<void>> = [];
  const call = <T>(h: ChildHandle, method: string, args?: unknown) => h.rpc.call<T>(method, args);

  let dbUrl: string | null = null;
  let pgliteDir: string | null = null;
  if (opts.databaseUrl) {
    // A fresh database per run, dropped at the end, like the PostgreSQL test helper does.
    const name = `ars_bench_${Date.now().toString(36)}_${randomBytes(3).toString('hex')}`;
    await adminQuery(opts.databaseUrl, `CREATE DATABASE ${name}`);
    cleanups.push(() => adminQuery(opts.databaseUrl!, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    const u = new URL(opts.databaseUrl);
    u.pathname = `/${name}`;
    dbUrl = u.toString();
  } else if (opts.pgliteOnDisk) {
    // The embedded default on disk, as `npm start` runs it: its synchronous WAL writes block the event loop, so
    // the figures then mostly measure the disk.
    pgliteDir = await mkdtemp(path.join(os.tmpdir(), 'ars-bench-'));
    cleanups.push(() => rm(pgliteDir!, { recursive: true, force: true }));
  }

  const harness = {} as Harness;
  try {
    const fakes = await startChild('runtime fakes', 'fakes-host.ts');
    children.push(fakes);
    const fakeUrls = await call<FakeUrls>(fakes, 'init');
    const masterKey = randomBytes(32).toString('base64');
    const startInstance = async (role: HostInit['role']): Promise<Instance> => {
      const host = await startChild(`service host (${role})`, 'service-host.ts', { execArgv: ['--expose-gc'] });
      children.push(host);
      const init: HostInit = { role, databaseUrl: dbUrl, pgliteDir, masterKey, fakes: fakeUrls, logLevel: opts.logLevel };
      const r = await call<{ service: string; baseline: string; driver: string; dbVersion: string }>(host, 'init', init);
      if (role === 'primary') harness.dbLabel = r.driver === 'pglite' ? `PGlite ${pgliteDir ? 'on disk in a temp dir' : 'in memory'} (${r.dbVersion.split(' on ')[0]})` : `${r.dbVersion} (pool of 20)`;
      return { host, service: r.service, baseline: r.baseline };
    };
    const primary = await startInstance('primary');
    const secondary = dbUrl ? await startInstance('secondary') : null;
    const load = await startChild('load generator', 'load-gen.ts', {
      handlers: {
        wakePlan: (args: { dispatched: number }) => harness.wakePlan(args),
        prepare: (key: string) => harness.prepare(key),
      },
    });
    children.push(load);
    const seeded = await call<Seeded>(primary.host, 'seed', { fakes: fakeUrls, counts: SEED });

    Object.assign(harness, {
      fakes, load, primary, secondary, fakeUrls, seeded, call,
      wakePlan: () => Promise.reject(new Error('no wake plan set')),
      prepare: async () => {},
      async profile<T>(inst: Instance, fn: () => Promise<T>) {
        await call(inst.host, 'profileStart');
        const result = await fn();
        return { result, profile: await call<HostProfile>(inst.host, 'profileStop') };
      },
      memory: (inst: Instance) => call<MemorySample>(inst.host, 'memory', { gc: true }),
      async close() {
        for (const c of children.reverse()) {
          await Promise.race([c.rpc.call('close').catch(() => {}), new Promise((r) => setTimeout(r, 5_000))]);
          await c.stop();
        }
        for (const fn of cleanups) await fn().catch((err: unknown) => console.error('cleanup failed:', err));
      },
    } satisfies Partial<Harness>);
    return harness;
  } catch (err) {
    for (const c of children.reverse()) await c.stop();
    for (const fn of cleanups) await fn().catch(() => {});
    throw err;
  }
}

/** True when the service has a route for this method and path (an unknown route answers 404 `not_found`). */
export async function routeAvailable(origin: string, method: string, path: string): Promise<boolean> {
  const res = await fetch(origin + path, { method, headers: { 'content-type': 'application/json' }, body: method === 'GET' ? undefined : '{}' });
  if (res.status !== 404) return true;
  const body = (await res.json().catch(() => ({}))) as { error?: string };
  return !String(body.error ?? '').startsWith('no route for');
}

/** With BENCH_CPU_PROF=<dir>, `fn` runs with the host under the V8 profiler, written as <dir>/<name>.cpuprofile. */
export async function cpuProfiled<T>(h: Harness, inst: Instance, name: string, fn: () => Promise<T>): Promise<T> {
  const dir = process.env.BENCH_CPU_PROF;
  if (!dir) return fn();
  await h.call(inst.host, 'cpuProfileStart');
  try {
    return await fn();
  } finally {
    await h.call(inst.host, 'cpuProfileStop', path.resolve(dir, `${name}.cpuprofile`));
  }
}

export async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 50): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > until) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
