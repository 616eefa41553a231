// Memory per held synchronous wait: 10,000 trigger-and-wait calls held open on Trigger.dev fake agents (a task
// runtime holds no outbound socket per wait; a workflow runtime would add one, and 10,000 of each would pass the
// 20,000 descriptors this machine allows a process). Measured as the service host's RSS and heap after forced
// full collections (the host runs with --expose-gc), before and while the waits are held, after a warm-up
// round of 500 waits. The baseline is the same number of requests held open by a bare Fastify route.
import path from 'node:path';
import type { Harness, Instance } from '../harness.ts';
import { routeAvailable, waitFor } from '../harness.ts';
import type { Report } from '../report.ts';
import { kib, mib } from '../stats.ts';
import type { MemorySample, ReqSpec } from '../types.ts';

const HELD = 10_000;
const WARMUP = 500;
/** How long the service gets to take all 10,000 waits before memory is measured with however many it holds. */
const FILL_TIMEOUT_MS = 60_000;
const SETTLE_MS = 5_000;

type Which = 'watchedRuns' | 'baselineHeld';

async function held(h: Harness, inst: Instance, which: Which): Promise<number> {
  return (await h.call<{ watchedRuns: number; baselineHeld: number }>(inst.host, 'held'))[which];
}

interface Measured {
  before: MemorySample;
  during: MemorySample;
  after: MemorySample;
  /** Requests actually held when `during` was taken (fewer than HELD if the service could not take them in time). */
  heldAtMeasure: number;
  fillSeconds: number;
  /** Trigger.dev status reads per second while the waits are held. */
  statusReadsPerSecond: number;
  released: Record<string, number>;
  lingering: number;
}

async function measureHolds(h: Harness, origin: string, holds: ReqSpec[], which: Which): Promise<Measured> {
  const inst = h.primary;
  const base = await held(h, inst, which);
  const hold = async (list: ReqSpec[], timeoutMs: number): Promise<number> => {
    const from = await held(h, inst, which);
    const t0 = Date.now();
    await h.call(h.load, 'hold', { origin, holds: list });
    await waitFor(`${list.length} held requests`, async () => (await held(h, inst, which)) - from >= list.length, timeoutMs, 200).catch(() => undefined);
    return (Date.now() - t0) / 1000;
  };
  const release = async () => {
    const released = await h.call<Record<string, number>>(h.load, 'release');
    // Callers that hang up should end their waits: give the service a moment, then count what is left.
    await waitFor('held requests to end', async () => (await held(h, inst, which)) <= base, 10_000, 100).catch(() => undefined);
    return released;
  };
  await hold(holds.slice(0, WARMUP), 60_000);
  await release();
  const before = await h.memory(inst);
  // BENCH_HEAP_PROF=<dir>: what the held requests keep alive, by allocation site (V8 sampling heap profiler).
  const heapDir = process.env.BENCH_HEAP_PROF;
  if (heapDir) await h.call(inst.host, 'heapSampleStart');
  const fillSeconds = await hold(holds, FILL_TIMEOUT_MS);
  // Held for a while (the first status polls of every wait settle); how often the runtime is asked meanwhile.
  const reads0 = (await h.call<{ statusReads: number }>(h.fakes, 'stats')).statusReads;
  await new Promise((r) => setTimeout(r, SETTLE_MS));
  const statusReadsPerSecond = ((await h.call<{ statusReads: number }>(h.fakes, 'stats')).statusReads - reads0) / (SETTLE_MS / 1000);
  const during = await h.memory(inst);
  if (heapDir) await h.call(inst.host, 'heapSampleStop', path.resolve(heapDir, `held-${which}.heapprofile`));
  const heldAtMeasure = (await held(h, inst, which)) - base;
  const released = await release();
  const lingering = (await held(h, inst, which)) - base;
  const after = await h.memory(inst);
  return { before, during, after, heldAtMeasure, fillSeconds, statusReadsPerSecond, released, lingering };
}

export async function heldWaitMemory(h: Harness, r: Report): Promise<void> {
  const name = `memory per held wait, ${HELD.toLocaleString('en-US')} held`;
  if (!(await routeAvailable(h.primary.service, 'POST', '/api/agents/1/runs/trigger-and-wait'))) return r.skipped(name, 'trigger-and-wait not available', '≤ 20 KiB');
  const agents = h.seeded.task;
  // The platform ceiling (spec 8.3), so no wait's own window ends while memory is measured.
  const body = JSON.stringify({ input: { bench: true }, timeoutMs: 300_000 });
  // 5/min per agent: two waits per agent (plus one warm-up wait for the first 500).
  const svcHolds: ReqSpec[] = Array.from({ length: HELD }, (_, i) => {
    const a = agents[i % agents.length]!;
    return { method: 'POST', path: `/api/agents/${a.id}/runs/trigger-and-wait`, headers: { authorization: `Bearer ${a.ingestKey}`, 'content-type': 'application/json' }, body };
  });
  const baseHolds: ReqSpec[] = Array.from({ length: HELD }, () => ({ method: 'POST', path: '/hold-forever', headers: { 'content-type': 'application/json' }, body }));

  await h.call(h.fakes, 'reset');
  const b = await measureHolds(h, h.primary.baseline, baseHolds, 'baselineHeld');
  const s = await measureHolds(h, h.primary.service, svcHolds, 'watchedRuns');
  await h.call(h.fakes, 'reset');

  const per = (m: Measured, k: 'rss' | 'heapUsed') => (m.during[k] - m.before[k]) / Math.max(1, m.heldAtMeasure);
  const collected = s.before.collected ? 'after forced GC' : 'WITHOUT forced GC (no --expose-gc)';
  const all = s.heldAtMeasure >= HELD;
  r.add({
    name: `${name} (RSS delta)`,
    service: `${kib(per(s, 'rss'))}${all ? '' : ` (only ${s.heldAtMeasure} held)`}`,
    baseline: kib(per(b, 'rss')),
    target: '≤ 20 KiB',
    verdict: all && per(s, 'rss') <= 20 * 1024 ? 'PASS' : 'MISS',
  });
  r.add({ name: `${name} (JS heap delta)`, service: kib(per(s, 'heapUsed')), baseline: kib(per(b, 'heapUsed')), verdict: 'INFO' });
  r.note(
    `held waits, ${collected}: service RSS ${mib(s.before.rss)} → ${mib(s.during.rss)} held → ${mib(s.after.rss)} released, heap ${mib(s.before.heapUsed)} → ${mib(s.during.heapUsed)} → ${mib(s.after.heapUsed)}; ` +
      `baseline RSS ${mib(b.before.rss)} → ${mib(b.during.rss)} → ${mib(b.after.rss)}`,
  );
  r.note(
    `held waits: the service took ${s.heldAtMeasure.toLocaleString('en-US')} of ${HELD.toLocaleString('en-US')} in ${s.fillSeconds.toFixed(1)} s ` +
      `(${(s.heldAtMeasure / s.fillSeconds).toFixed(0)} waits/s established); the bare route took ${b.heldAtMeasure.toLocaleString('en-US')} in ${b.fillSeconds.toFixed(1)} s. ` +
      `While held, the service read run status from the Trigger.dev fake ${s.statusReadsPerSecond.toFixed(0)} times/s (every held wait polls the runtime itself)`,
  );
  r.note(
    `held waits released by the client hanging up: service ${JSON.stringify(s.released)}, ${s.lingering} waits still held 10 s later; ` +
      `baseline ${JSON.stringify(b.released)}, ${b.lingering} still held`,
  );
}
