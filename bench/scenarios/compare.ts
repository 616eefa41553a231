// Fixed-duration throughput of the service against its baseline: a warm-up for each, then alternating measured
// windows (baseline, service; then service, baseline; …) so drift on a noisy machine hits both sides alike.
import path from 'node:path';
import type { Harness, Instance } from '../harness.ts';
import { addCounts, concatSamples, summarize } from '../stats.ts';
import { postgresCpuMs } from '../pg-cpu.ts';
import type { HostProfile, LatencySummary, ReqSpec, ThroughputJob, ThroughputResult } from '../types.ts';

export interface Side {
  inst: Instance;
  origin: string;
  requests: ReqSpec[];
  /** Work the side's windows run beside their requests (retention.ts: a deletion in progress), started before each window's warm-up and stopped after it. */
  beside?: { start(): Promise<void>; stop(): Promise<void> };
}

export interface SideResult {
  requests: number;
  rps: number;
  /** Requests per second in each measured window, in the order they ran (paired with the other sides' by index). */
  windowRps: number[];
  latency: LatencySummary;
  statuses: Record<string, number>;
  clientCpu: number;
  /** Service-host CPU per request (ms) and DB statements per request, from the host's own profile. */
  cpuMsPerReq: number;
  /** PostgreSQL's CPU per request (ms), all its processes, where the server runs on this machine (pg-cpu.ts). */
  pgCpuMsPerReq: number | null;
  elu: number;
  queries: Array<{ sql: string; perReq: number; avgMs: number }>;
  invokeAvgMs: number;
}

/**
 * `slices`: measured windows per side. With 4, a single pair of windows read anywhere from 66% to 122% of its
 * baseline (the /trigger and /callback pairs of the last ten full runs, issue 15), so a figure moved by ±5% between
 * runs of the same code; 8 halve the variance of its total, for about 50 s more per figure.
 */
export const TIMING = { connections: 32, preWarmMs: 2_000, warmupMs: 1_000, sliceMs: 3_000, slices: 8 };

interface Measured {
  r: ThroughputResult;
  p: HostProfile;
  /** PostgreSQL's CPU over the same window as the host's profile, or null. */
  pgMs: number | null;
}

async function measure(h: Harness, side: Side, warmupMs: number, durationMs: number, atLeast?: number): Promise<Measured> {
  const job: ThroughputJob = { origin: side.origin, requests: side.requests, connections: TIMING.connections, warmupMs, durationMs, atLeast };
  // Only on PostgreSQL (the second instance exists only then): a PGlite run would report an idle server's CPU.
  const pgCpu = h.secondary ? postgresCpuMs : async () => null;
  await side.beside?.start();
  const pg0 = await pgCpu();
  const { result, profile } = await h.profile(side.inst, () => h.call<ThroughputResult>(h.load, 'throughput', job));
  const pg1 = await pgCpu();
  await side.beside?.stop();
  return { r: result, p: profile, pgMs: pg0 === null || pg1 === null ? null : pg1 - pg0 };
}

function combine(parts: Measured[]): SideResult {
  const requests = parts.reduce((s, x) => s + x.r.requests, 0);
  const seconds = parts.length * (TIMING.sliceMs / 1000);
  const statuses: Record<string, number> = {};
  const queries = new Map<string, { count: number; totalMs: number }>();
  let cpuMs = 0;
  let pgMs: number | null = 0;
  let elu = 0;
  let invokes = 0;
  let invokeMs = 0;
  for (const { r, p, pgMs: pg } of parts) {
    addCounts(statuses, r.statuses);
    // The host's profile window includes the warm-up second: scale its costs by the measured share of requests.
    cpuMs += p.cpuMs;
    pgMs = pgMs === null || pg === null ? null : pgMs + pg;
    elu += p.elu / parts.length;
    invokes += p.invokes.count;
    invokeMs += p.invokes.totalMs;
    for (const q of p.queries) {
      const e = queries.get(q.sql) ?? { count: 0, totalMs: 0 };
      e.count += q.count;
      e.totalMs += q.totalMs;
      queries.set(q.sql, e);
    }
  }
  const handled = Math.max(1, parts.reduce((s, x) => s + x.r.requests * (1 + TIMING.warmupMs / TIMING.sliceMs), 0));
  return {
    requests,
    rps: requests / seconds,
    windowRps: parts.map((x) => x.r.requests / (TIMING.sliceMs / 1000)),
    latency: summarize(concatSamples(parts.map((x) => x.r.samples))),
    statuses,
    clientCpu: parts.reduce((s, x) => s + x.r.clientCpu, 0) / parts.length,
    cpuMsPerReq: cpuMs / handled,
    pgCpuMsPerReq: pgMs === null ? null : pgMs / handled,
    elu,
    queries: [...queries]
      .map(([sql, e]) => ({ sql, perReq: e.count / handled, avgMs: e.totalMs / Math.max(1, e.count) }))
      .filter((q) => q.perReq >= 0.01)
      .sort((a, b) => b.perReq * b.avgMs - a.perReq * a.avgMs),
    invokeAvgMs: invokes ? invokeMs / invokes : 0,
  };
}

/**
 * The service against its baseline, and optionally against a further side printed for information (`info`), each
 * measured in the same alternating windows.
 */
export async function compareThroughput(
  h: Harness,
  service: Side,
  baseline: Side,
  label: string,
  info?: Side,
): Promise<{ service: SideResult; baseline: SideResult; info?: SideResult }> {
  const sides = [baseline, service, ...(info ? [info] : [])];
  // Pre-warm: at least one pass over every request (every agent), as a long-running instance has seen them,
  // so the measured windows are the steady state of the service's caches rather than its first minutes.
  for (const side of sides) await measure(h, side, 0, TIMING.preWarmMs, side.requests.length);
  // BENCH_CPU_PROF=<dir>: one extra service window under the V8 profiler, written as <dir>/<label>.cpuprofile.
  const profDir = process.env.BENCH_CPU_PROF;
  if (profDir) {
    for (const [side, suffix] of [[service, ''], [baseline, '-baseline']] as const) {
      await h.call(side.inst.host, 'cpuProfileStart');
      const { r } = await measure(h, side, 0, TIMING.sliceMs);
      const file = path.resolve(profDir, `${label.replace(/[^a-z0-9]+/gi, '-')}${suffix}.cpuprofile`);
      await h.call(side.inst.host, 'cpuProfileStop', file);
      // The request count lets a profile's times be read per request (and compared across the two sides).
      console.error(`  · ${path.basename(file)}: ${r.requests} requests`);
    }
  }
  const windows = sides.map(() => [] as Measured[]);
  // Every other round runs the sides in reverse order: a window's place in its round (what ran just before it)
  // moved the ratio by a few percent in A/A runs (decisions.md), and the reversal spreads that over both sides.
  for (let i = 0; i < TIMING.slices; i++) {
    const order = [...sides.keys()];
    if (i % 2 === 1) order.reverse();
    for (const k of order) windows[k]!.push(await measure(h, sides[k]!, TIMING.warmupMs, TIMING.sliceMs));
  }
  const [b, s, extra] = windows.map(combine);
  return { service: s!, baseline: b!, ...(extra && { info: extra }) };
}

/** One line per side: where a request's time goes in the service host. */
export function costLines(label: string, r: SideResult): string[] {
  const q = r.queries.map((x) => `${x.perReq.toFixed(2)}× "${x.sql}" (avg ${x.avgMs.toFixed(2)} ms)`).join('; ');
  return [
    `${label}: ${r.cpuMsPerReq.toFixed(3)} ms host CPU/request${r.pgCpuMsPerReq === null ? '' : ` + ${r.pgCpuMsPerReq.toFixed(3)} ms PostgreSQL CPU`}, event loop ${(r.elu * 100).toFixed(0)}% busy, ` +
      `load generator ${(r.clientCpu * 100).toFixed(0)}% of a core${r.clientCpu > 0.9 ? ' (SATURATED: the figure is a floor)' : ''}` +
      (r.invokeAvgMs ? `, runtime invoke avg ${r.invokeAvgMs.toFixed(2)} ms` : ''),
    `${label} DB statements per request: ${q || 'none'}`,
  ];
}

export function statusLine(r: SideResult): string {
  return Object.entries(r.statuses).map(([k, v]) => `${k}×${v}`).join(', ');
}

/** DB statements per operation from a host profile covering `ops` operations. */
export function statementsPerOp(p: HostProfile, ops: number): string {
  const parts = p.queries
    .filter((q) => q.count / ops >= 0.05)
    .map((q) => `${(q.count / ops).toFixed(2)}× "${q.sql}" (avg ${(q.totalMs / q.count).toFixed(2)} ms)`);
  const invoke = p.invokes.count ? `; runtime invoke ${(p.invokes.count / ops).toFixed(2)}× (avg ${(p.invokes.totalMs / p.invokes.count).toFixed(2)} ms)` : '';
  return `${(p.cpuMs / ops).toFixed(3)} ms host CPU each; ${parts.join('; ') || 'no statements'}${invoke}`;
}
