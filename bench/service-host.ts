// Child process (started with --expose-gc): one service instance built exactly as src/server.ts builds it
// (createContext + buildApp, pino at the configured level writing to stdout, which the orchestrator discards),
// listening on 127.0.0.1:0, plus the bare-Fastify baselines on a second port sharing its database handle.
// Background work (pollers, sweepers) is not started, so every figure is the request path alone.
import { randomBytes } from 'node:crypto';
import { constants as perfConstants, performance, PerformanceObserver } from 'node:perf_hooks';
import { Session } from 'node:inspector/promises';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance } from 'fastify';
import { buildApp } from '../src/app.ts';
import { loadConfig } from '../src/config.ts';
import { singleKeyring } from '../src/lib/secrets.ts';
import { createContext, stopContext, type AppContext } from '../src/context.ts';
import { migrate } from '../src/storage/migrate.ts';
import { openPGlite } from '../src/storage/pglite-db.ts';
import { openPostgres } from '../src/storage/postgres-db.ts';
import type { Db } from '../src/storage/db.ts';
import { createRuntimeRegistry } from '../src/runtimes/runtime-registry.ts';
import { serveParent } from './ipc.ts';
import { overlaps } from './stats.ts';
import { CallProfile, profiledDb, profiledRuntimes } from './profiled.ts';
import { buildBaselines, type Baselines } from './baselines.ts';
import { seedAgents, seedOldRuns, seedRunningRuns, type SeedCounts } from './seed.ts';
import { deleteOldRuns } from '../src/background/retention.ts';
import { refreshRollup } from '../src/runs/run-rollup.ts';
import type { FakeUrls, GcPause, HostProfile, MemorySample, Seeded } from './types.ts';

export interface HostInit {
  role: 'primary' | 'secondary';
  databaseUrl: string | null;
  pgliteDir: string | null;
  masterKey: string; // base64, shared by every instance so sealed runtime keys open everywhere
  fakes: FakeUrls;
  logLevel: string;
}

const gc = (globalThis as { gc?: () => void }).gc;
const profile = new CallProfile();
let rawDb: Db | null = null;
let ctx: AppContext | null = null;
let app: FastifyInstance | null = null;
let baselines: Baselines | null = null;
let window: { t0: number; cpu: NodeJS.CpuUsage; elu: ReturnType<typeof performance.eventLoopUtilization> } | null = null;
let rssSampler: { timer: NodeJS.Timeout; max: number } | null = null;
let inspector: Session | null = null;
/** The retention job run back to back while a window measures (scenarios/retention.ts), and the runs it deleted. */
let retention: { on: boolean; loop: Promise<void>; deleted: number } | null = null;

/**
 * The host's garbage-collection pauses, newest last, on the machine's clock: the wake figure counts those that
 * fall inside its rounds and which of its slowest samples they overlap. Recorded only while that figure runs
 * (gcRecording), so no other figure pays for the observer. Bounded: the oldest go first.
 */
const gcPauses: GcPause[] = [];
const MAX_GC_PAUSES = 20_000;
const gcObserver = new PerformanceObserver((list) => {
  for (const e of list.getEntries()) {
    // Scavenges and full collections stop the host's JavaScript; incremental marking steps (short slices
    // between them) and weak-callback processing are left out.
    const kind = (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind;
    if (kind !== perfConstants.NODE_PERFORMANCE_GC_MINOR && kind !== perfConstants.NODE_PERFORMANCE_GC_MAJOR) continue;
    gcPauses.push({ at: performance.timeOrigin + e.startTime, ms: e.duration, kind: kind === perfConstants.NODE_PERFORMANCE_GC_MINOR ? 'scavenge' : 'full' });
  }
  if (gcPauses.length > MAX_GC_PAUSES) gcPauses.splice(0, gcPauses.length - MAX_GC_PAUSES);
});

const need = <T>(v: T | null, what: string): T => {
  if (v === null) throw new Error(`${what}: call init first`);
  return v;
};

function address(a: FastifyInstance): string {
  const addr = a.server.address();
  if (!addr || typeof addr === 'string') throw new Error('not listening');
  return `http://127.0.0.1:${addr.port}`;
}

function memory(collected: boolean): MemorySample {
  const m = process.memoryUsage();
  return { rss: m.rss, heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers, collected };
}

serveParent({
  async init(o: HostInit): Promise<{ service: string; baseline: string; driver: string; dbVersion: string }> {
    rawDb = o.databaseUrl ? await openPostgres(o.databaseUrl, { poolSize: 20 }) : await openPGlite(o.pgliteDir ?? undefined);
    if (o.role === 'primary') await migrate(rawDb);
    const db = profiledDb(rawDb, profile);
    // ARS_RUN_RETENTION_DAYS for the retention scenario's batches (scenarios/retention.ts); no background work runs here.
    const config = loadConfig({ LOG_LEVEL: o.logLevel, HOST: '127.0.0.1', PORT: '0', ARS_RUN_RETENTION_DAYS: '30' });
    ctx = await createContext({
      config,
      db,
      masterKeys: singleKeyring(Buffer.from(o.masterKey, 'base64')),
      adminToken: `bench_admin_${randomBytes(24).toString('hex')}`,
      runtimes: profiledRuntimes(createRuntimeRegistry(), profile),
    });
    app = await buildApp(ctx);
    await app.listen({ host: '127.0.0.1', port: 0 });
    baselines = await buildBaselines(db, o.fakes);
    await baselines.app.listen({ host: '127.0.0.1', port: 0 });
    // shared_buffers: how much of the ten-million-run database's indexes stays in PostgreSQL's own cache decides
    // part of what the scale figures pay (decisions.md "Scale"), so the machine section names it.
    const { rows } = await rawDb.query<{ version: string; buffers: string }>("SELECT version() AS version, current_setting('shared_buffers') AS buffers");
    const dbVersion = `${rows[0]!.version.split(',')[0]}, shared_buffers ${rows[0]!.buffers}`;
    return { service: address(app), baseline: address(baselines.app), driver: rawDb.driver, dbVersion };
  },

  async seed(args: { fakes: FakeUrls; counts: SeedCounts }): Promise<Seeded> {
    const c = need(ctx, 'seed');
    return seedAgents(need(rawDb, 'seed'), c.secrets, args.fakes, args.counts);
  },

  seedRunningRuns: (agentIds: number[]) => seedRunningRuns(need(rawDb, 'seedRunningRuns'), agentIds),

  /** Old completed runs for run retention to delete, then the dashboard rollup's build (retention waits for it). */
  async seedOldRuns(args: { agentIds: number[]; runs: number }): Promise<{ seedSeconds: number; rollupSeconds: number }> {
    const db = need(rawDb, 'seedOldRuns');
    const seedSeconds = await seedOldRuns(db, args.agentIds, args.runs);
    // As autovacuum would, past its threshold, within a minute: without statistics the planner guesses, and reads a
    // batch's runs through three bitmap indexes and a sort of all million instead of the first 500 by creation time.
    await db.query('ANALYZE runs');
    await db.query('ANALYZE run_transitions');
    const t0 = Date.now();
    await refreshRollup(db, new Date());
    return { seedSeconds, rollupSeconds: (Date.now() - t0) / 1000 };
  },

  /** The runs run retention would still delete. */
  async oldRuns(): Promise<number> {
    const { rows } = await need(rawDb, 'oldRuns').query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE created_at < now() - interval '300 days'");
    return rows[0]!.n;
  },

  /**
   * Starts the retention job's run deletion as its passes go through a backlog: the same function, batches and pauses
   * between them, cutoff (ARS_RUN_RETENTION_DAYS); passes of one batch back to back, so stopping waits for one batch
   * rather than a pass (the job's next pass would come ten minutes later).
   */
  retentionStart(): void {
    const c = need(ctx, 'retentionStart');
    if (retention?.on) return;
    const r: { on: boolean; loop: Promise<void>; deleted: number } = { on: true, loop: Promise.resolve(), deleted: retention?.deleted ?? 0 };
    r.loop = (async () => {
      while (r.on) {
        const { runs } = await deleteOldRuns(c, new Date(Date.now() - c.config.lifecycle.runRetentionDays! * 86_400_000), 1);
        r.deleted += runs;
        if (runs === 0) await new Promise((done) => setTimeout(done, 50));
      }
    })();
    retention = r;
  },

  /** Stops after the batch in progress; returns the runs deleted since the scenario began. */
  async retentionStop(): Promise<number> {
    const r = need(retention, 'retentionStop');
    r.on = false;
    await r.loop;
    return r.deleted;
  },

  async maxRunId(): Promise<number> {
    const { rows } = await need(rawDb, 'maxRunId').query<{ m: number | null }>('SELECT max(id) AS m FROM runs');
    return rows[0]!.m ?? 0;
  },

  /** Runs created after `afterId` for these agents, still waiting to be woken. */
  async queuedRuns(args: { agentIds: number[]; afterId: number }): Promise<Array<{ runId: number; agentId: number }>> {
    const { rows } = await need(rawDb, 'queuedRuns').query<{ id: number; agent_id: number }>(
      `SELECT id, agent_id FROM runs WHERE id > $1 AND agent_id = ANY($2::bigint[]) AND status = 'queued' ORDER BY id`,
      [args.afterId, args.agentIds],
    );
    return rows.map((r) => ({ runId: r.id, agentId: r.agent_id }));
  },

  /** Synchronous waits this instance holds (RunWatch listeners) and baseline requests held open. */
  held: (): { watchedRuns: number; baselineHeld: number } => ({
    watchedRuns: need(ctx, 'held').runWatch.watchedRuns,
    baselineHeld: need(baselines, 'held').heldCount(),
  }),

  gcRecording(on: boolean): void {
    gcPauses.length = 0;
    if (on) gcObserver.observe({ entryTypes: ['gc'] });
    else gcObserver.disconnect();
  },

  /** The pauses recorded that overlap [from, to] (ms since the epoch). */
  gcPauses: (w: { from: number; to: number }): GcPause[] => gcPauses.filter((p) => overlaps(p, w.from, w.to)),

  profileStart(): void {
    profile.reset();
    window = { t0: performance.now(), cpu: process.cpuUsage(), elu: performance.eventLoopUtilization() };
  },

  profileStop(): HostProfile {
    const w = need(window, 'profileStop');
    const cpu = process.cpuUsage(w.cpu);
    const queries = [...profile.queries].map(([sql, e]) => ({ sql, ...e })).sort((a, b) => b.totalMs - a.totalMs);
    return {
      wallMs: performance.now() - w.t0,
      cpuMs: (cpu.user + cpu.system) / 1000,
      elu: performance.eventLoopUtilization(w.elu).utilization,
      queries,
      invokes: { ...profile.invokes },
    };
  },

  /** Memory after a full collection (needs --expose-gc; without it the figure is labelled as such). */
  async memory(args: { gc: boolean }): Promise<MemorySample> {
    if (args.gc && gc) {
      for (let i = 0; i < 3; i++) {
        gc();
        await new Promise((r) => setTimeout(r, 50)); // let finalizers and freed native buffers go
      }
    }
    return memory(args.gc && gc !== undefined);
  },

  rssSampleStart(): void {
    if (rssSampler) clearInterval(rssSampler.timer);
    const s = { max: process.memoryUsage.rss(), timer: setInterval(() => (s.max = Math.max(s.max, process.memoryUsage.rss())), 10) };
    rssSampler = s;
  },

  rssSampleStop(): number {
    const s = need(rssSampler, 'rssSampleStop');
    clearInterval(s.timer);
    rssSampler = null;
    return Math.max(s.max, process.memoryUsage.rss());
  },

  /** A V8 CPU profile of one phase (BENCH_CPU_PROF): where the host's time goes, function by function. */
  async cpuProfileStart(): Promise<void> {
    inspector ??= new Session();
    inspector.connect();
    await inspector.post('Profiler.enable');
    await inspector.post('Profiler.start');
  },

  async cpuProfileStop(file: string): Promise<void> {
    const s = need(inspector, 'cpuProfileStop');
    const { profile: cpu } = await s.post('Profiler.stop');
    await writeProfile(file, JSON.stringify(cpu));
    s.disconnect();
  },

  /** Sampling heap profile (BENCH_HEAP_PROF): allocations made after start that are still alive at stop. */
  async heapSampleStart(): Promise<void> {
    inspector ??= new Session();
    inspector.connect();
    await inspector.post('HeapProfiler.enable');
    await inspector.post('HeapProfiler.startSampling', { samplingInterval: 4096 });
  },

  async heapSampleStop(file: string): Promise<void> {
    const s = need(inspector, 'heapSampleStop');
    const { profile: heap } = await s.post('HeapProfiler.getSamplingProfile');
    await s.post('HeapProfiler.stopSampling');
    await writeProfile(file, JSON.stringify(heap));
    s.disconnect();
  },

  async close(): Promise<void> {
    await baselines?.app.close();
    await app?.close();
    if (ctx) {
      await stopContext(ctx);
      await ctx.runtimes.close();
    }
    await rawDb?.close();
  },
});

/** A profile written where BENCH_CPU_PROF or BENCH_HEAP_PROF points, the folder made if it is not there yet. */
async function writeProfile(file: string, data: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, data);
}
