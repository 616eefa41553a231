// Issue 39 item 4: /trigger while run retention (ARS_RUN_RETENTION_DAYS) deletes a backlog of old runs, against
// /trigger on the same service and database with the deletion paused: the same requests, alternating windows.
import type { Harness } from '../harness.ts';
import { routeAvailable } from '../harness.ts';
import type { Report } from '../report.ts';
import { pct, rps } from '../stats.ts';
import type { ReqSpec } from '../types.ts';
import { compareThroughput, costLines, statusLine, type Side } from './compare.ts';

/** Old runs to delete: BENCH_RETENTION_RUNS, default a million. */
/** The drain after the measured windows is timed for at most this long. */
const DRAIN_MAX_MS = 120_000;
export const RETENTION_RUNS = Number(process.env.BENCH_RETENTION_RUNS || 1_000_000);
const MIN = 0.9;

export async function triggerDuringRetention(h: Harness, r: Report): Promise<void> {
  const name = `/trigger while ${RETENTION_RUNS.toLocaleString('en-US')} old runs are deleted`;
  if (!(await routeAvailable(h.primary.service, 'POST', '/api/agents/1/runs/trigger'))) return r.skipped(name, '/trigger not available', `≥ ${pct(MIN)}`);
  const host = h.primary.host;
  const seeded = await h.call<{ seedSeconds: number; rollupSeconds: number }>(host, 'seedOldRuns', { agentIds: h.seeded.task.map((a) => a.id), runs: RETENTION_RUNS });
  r.note(`retention: ${RETENTION_RUNS.toLocaleString('en-US')} old runs seeded in ${seeded.seedSeconds.toFixed(0)} s, the dashboard rollup built in ${seeded.rollupSeconds.toFixed(0)} s`);

  const body = JSON.stringify({ input: { bench: true } });
  const requests: ReqSpec[] = h.seeded.task.map((a) => ({ method: 'POST', path: `/api/agents/${a.id}/runs/trigger`, headers: { authorization: `Bearer ${a.ingestKey}`, 'content-type': 'application/json' }, body }));
  const quiet: Side = { inst: h.primary, origin: h.primary.service, requests };
  let deleting = 0;
  let busyMs = 0;
  const t0 = Date.now();
  const busy: Side = {
    ...quiet,
    beside: {
      start: () => h.call(host, 'retentionStart'),
      stop: async () => {
        const t = Date.now();
        deleting = await h.call<number>(host, 'retentionStop');
        busyMs += Date.now() - t;
      },
    },
  };
  await h.call(h.fakes, 'autoPrune', true);
  const res = await compareThroughput(h, busy, quiet, 'trigger during retention');
  await h.call(h.fakes, 'autoPrune', false);
  const ratio = res.service.rps / res.baseline.rps;
  const wrong = (res.service.statuses['201'] ?? 0) / Math.max(1, res.service.requests) < 0.99;
  r.add({ name, service: rps(res.service.rps), baseline: `${rps(res.baseline.rps)} (no deletion)`, ratio: pct(ratio), target: `≥ ${pct(MIN)}`, verdict: ratio >= MIN && !wrong ? 'PASS' : 'MISS' });
  r.note(`retention: ${deleting.toLocaleString('en-US')} runs deleted during the deleting side's windows (${((Date.now() - t0) / 1000).toFixed(0)} s scenario; stopping waited ${busyMs} ms in all for batches in progress)`);
  r.note(`trigger during retention statuses — deleting: ${statusLine(res.service)}; not deleting: ${statusLine(res.baseline)}`);
  const pairs = res.service.windowRps.map((x, i) => pct(x / res.baseline.windowRps[i]!));
  r.note(`trigger during retention, deleting/not per pair of alternating windows: ${pairs.join(', ')}`);
  for (const l of [...costLines('trigger while deleting', res.service), ...costLines('trigger not deleting', res.baseline)]) r.note(l);

  // The rest of the backlog, with nothing else running: how fast the job deletes on this machine, paced as it paces
  // itself. Timed for at most DRAIN_MAX_MS (on PGlite, paced to a tenth of the thread, a million takes hours): the
  // rate over that time, and what it makes of the rest.
  const left = await h.call<number>(host, 'oldRuns');
  const t1 = Date.now();
  await h.call(host, 'retentionStart');
  let remaining = left;
  while (remaining > 0 && Date.now() - t1 < DRAIN_MAX_MS) {
    await new Promise((done) => setTimeout(done, 2_000));
    remaining = await h.call<number>(host, 'oldRuns');
  }
  const total = await h.call<number>(host, 'retentionStop');
  const s = (Date.now() - t1) / 1000;
  const rate = (left - remaining) / s;
  r.note(
    remaining === 0
      ? `retention: the remaining ${left.toLocaleString('en-US')} old runs deleted alone in ${s.toFixed(0)} s (${Math.round(rate).toLocaleString('en-US')} runs/s); ${total.toLocaleString('en-US')} in all`
      : `retention: alone, ${(left - remaining).toLocaleString('en-US')} old runs deleted in ${s.toFixed(0)} s (${Math.round(rate).toLocaleString('en-US')} runs/s, paced); the remaining ${remaining.toLocaleString('en-US')} would take ${Math.round(remaining / Math.max(rate, 1) / 60)} min more at that rate`,
  );
}
