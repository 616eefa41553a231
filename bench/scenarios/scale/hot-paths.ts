// /trigger and /callback: the same requests on both databases, in alternating blocks; ratio = scale / empty.
import type { FastifyInstance } from 'fastify';
import type { Harness } from '../../harness.ts';
import type { Report } from '../../report.ts';
import { median, ms } from '../../stats.ts';
import { seedRunningRuns } from '../../seed.ts';
import { LABEL } from './database.ts';
import type { Side } from './side.ts';
import { MAX_RATIO, p50p95 } from './targets.ts';

/** /trigger and /callback: blocks per side (one request per keyed agent each: 11 per agent with the warm-up, under its 20/min). */
const BLOCKS = 10;

const CONCURRENCY = 8;

const json = { 'content-type': 'application/json' };

export async function hotPaths(h: Harness, r: Report, big: Side, empty: Side): Promise<void> {
  const triggerBody = JSON.stringify({ input: { bench: true } });
  const trigger = (s: Side) => s.keyed.map((a) => () => inject(s.app, 'POST', `/api/agents/${a.id}/runs/trigger`, a.ingestKey, triggerBody, 201));
  await h.call(h.fakes, 'autoPrune', true);
  try {
    await ratioFigure(r, '/trigger (201)', trigger(big), trigger(empty));
  } finally {
    await h.call(h.fakes, 'autoPrune', false);
  }
  const cbBody = JSON.stringify({ type: 'output', output: { step: 1, note: 'intermediate' }, outputs: 1 });
  const callback = async (s: Side) => {
    const runs = await seedRunningRuns(s.db, s.keyed.map((a) => a.id));
    const keyOf = new Map(s.keyed.map((a) => [a.id, a.agentKey]));
    return runs.map((x) => () => inject(s.app, 'POST', `/api/runs/${x.runId}/callback`, keyOf.get(x.agentId)!, cbBody, 200));
  };
  await ratioFigure(r, '/callback output update (200)', await callback(big), await callback(empty));
}

async function inject(app: FastifyInstance, method: 'GET' | 'POST', url: string, key: string, body: string | undefined, expect: number): Promise<void> {
  const res = await app.inject({ method, url, headers: { authorization: `Bearer ${key}`, ...json }, payload: body });
  if (res.statusCode !== expect) throw new Error(`${method} ${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
}

/** Runs the requests CONCURRENCY at a time; returns each one's latency. */
async function block(requests: Array<() => Promise<void>>): Promise<{ wallMs: number; latencies: number[] }> {
  const latencies: number[] = [];
  let next = 0;
  const t0 = performance.now();
  await Promise.all(Array.from({ length: CONCURRENCY }, async () => {
    while (next < requests.length) {
      const req = requests[next++]!;
      const t = performance.now();
      await req();
      latencies.push(performance.now() - t);
    }
  }));
  return { wallMs: performance.now() - t0, latencies };
}

/**
 * One unmeasured block per side, then BLOCKS rounds of one block per side back to back (order alternating).
 * Requests per second over all blocks; the ratio is the median of the rounds' ratios, so a burst of other work on
 * the machine mostly spoils one round rather than one side.
 */
async function ratioFigure(r: Report, name: string, bigReqs: Array<() => Promise<void>>, emptyReqs: Array<() => Promise<void>>): Promise<void> {
  const acc = { big: { wall: 0, n: 0, lat: [] as number[] }, empty: { wall: 0, n: 0, lat: [] as number[] } };
  const ratios: number[] = [];
  for (let i = 0; i <= BLOCKS; i++) {
    const wall = { big: 0, empty: 0 };
    for (const [k, reqs] of (i % 2 ? [['empty', emptyReqs], ['big', bigReqs]] : [['big', bigReqs], ['empty', emptyReqs]]) as Array<['big' | 'empty', Array<() => Promise<void>>]>) {
      const b = await block(reqs);
      if (i === 0) continue;
      wall[k] = b.wallMs / reqs.length;
      acc[k].wall += b.wallMs;
      acc[k].n += reqs.length;
      acc[k].lat.push(...b.latencies);
    }
    if (i > 0) ratios.push(wall.empty / wall.big);
  }
  const rps = (a: typeof acc.big) => (a.n * 1000) / a.wall;
  const ratio = median(ratios);
  const lat = (a: typeof acc.big) => p50p95(a.lat);
  r.add({
    name: `${LABEL} runs — ${name}, ${CONCURRENCY} at a time`,
    service: `${rps(acc.big).toFixed(0)} req/s`,
    baseline: `empty db ${rps(acc.empty).toFixed(0)} req/s`,
    ratio: `${(ratio * 100).toFixed(0)}%`,
    target: `≥ ${(100 / MAX_RATIO).toFixed(0)}%`,
    verdict: ratio >= 1 / MAX_RATIO ? 'PASS' : 'MISS',
  });
  r.note(`${LABEL} runs — ${name}: each round's scale/empty throughput ratio: ${ratios.map((x) => `${(x * 100).toFixed(0)}%`).join(', ')}`);
  const [lb, le] = [lat(acc.big), lat(acc.empty)];
  r.note(`${LABEL} runs — ${name}: ${acc.big.n} requests per side; latency at scale p50 ${ms(lb.p50, 1)} p95 ${ms(lb.p95, 1)}, empty p50 ${ms(le.p50, 1)} p95 ${ms(le.p95, 1)}`);
}
