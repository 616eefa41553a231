// The poll sweep and the timeout sweep: the same number of due runs made due on each database, one pass of the
// background job's own function timed, cost per due run; ratio = scale / empty.
import type { Harness } from '../../harness.ts';
import type { Report } from '../../report.ts';
import { pollDueRuns } from '../../../src/background/poller.ts';
import { sweepTimeouts } from '../../../src/background/timeout-sweeper.ts';
import { median } from '../../stats.ts';
import { LABEL } from './database.ts';
import { quiesce, type Side } from './side.ts';
import { MAX_RATIO } from './targets.ts';

/** Runs made due per sweep pass. */
const DUE = 2_000;

/**
 * Unmeasured and measured sweep rounds (one pass per side each). The new empty database's first passes run about a
 * fifth cheaper than its steady state (61–63 µs against 72–84 µs per timed-out run, seen over 12 rounds), so two
 * rounds warm up; with 5 measured rounds the median ratio of the timeout sweep swung from 82% to 132% between full
 * runs, so 11 are measured (about 20 s more).
 */
const SWEEP_WARMUP_ROUNDS = 2;

const SWEEP_ROUNDS = 11;

const POLL_OUTPUT = {
  summary: `The document covers ${'x'.repeat(32)}. ${'lorem ipsum dolor sit amet '.repeat(20)}`,
  items: [1, 2, 3].map((i) => ({ title: `Follow up ${i}`, owner: `user${i}@example.com`, due: '2026-12-01', done: false })),
  usage: { input_tokens: 1800, output_tokens: 420, model: 'gpt-4o-mini' },
};

export async function sweeps(h: Harness, r: Report, big: Side, empty: Side): Promise<void> {
  for (const s of [big, empty]) await quiesce(s.db);
  const per = { poll: { big: [] as number[], empty: [] as number[] }, timeout: { big: [] as number[], empty: [] as number[] } };
  // Warm-up rounds first (connections, the agent directory's runtimes, plans, the new database's first pages);
  // then SWEEP_ROUNDS alternating rounds.
  for (let round = 0; round < SWEEP_WARMUP_ROUNDS + SWEEP_ROUNDS; round++) {
    for (const s of round % 2 ? [empty, big] : [big, empty]) {
      const k = s === big ? 'big' : 'empty';
      // Statistics as autovacuum keeps them: on the small database it re-analyzes after 50 rows + 10% changed, so
      // before every pass; at scale after 10% of the table, so never within a run. Without this the empty
      // database plans on an empty table's statistics, its passes slow down round after round (331 → 1,042 µs per
      // due run seen) and the ratio flatters the scale side.
      if (s === empty) await s.db.exec('ANALYZE runs');
      const [t, p] = [await timeoutPass(s), await pollPass(h, s)];
      if (round < SWEEP_WARMUP_ROUNDS) continue;
      per.timeout[k].push(t);
      per.poll[k].push(p);
    }
  }
  for (const [kind, label] of [['poll', `poll sweep: one pass over ${DUE.toLocaleString('en-US')} due runs (half finished upstream)`], ['timeout', `timeout sweep: one pass over ${DUE.toLocaleString('en-US')} timed-out runs`]] as const) {
    const [b, e] = [median(per[kind].big), median(per[kind].empty)];
    // The ratio is the median of each round's scale/empty ratio: the two passes of a round ran back to back, so
    // a burst of other work on the machine mostly hits one round, not one side.
    const ratio = median(per[kind].big.map((x, i) => x / per[kind].empty[i]!));
    r.add({
      name: `${LABEL} runs — ${label}`,
      service: `${(b * 1000).toFixed(0)} µs per due run`,
      baseline: `empty db ${(e * 1000).toFixed(0)} µs`,
      ratio: `${(ratio * 100).toFixed(0)}%`,
      target: `≤ ${(MAX_RATIO * 100).toFixed(0)}%`,
      verdict: ratio <= MAX_RATIO ? 'PASS' : 'MISS',
    });
    r.note(`${LABEL} runs — ${kind} sweep per due run, ${SWEEP_ROUNDS} rounds after ${SWEEP_WARMUP_ROUNDS} unmeasured ones (medians shown; ratio = median of the rounds' ratios): scale ${per[kind].big.map((x) => (x * 1000).toFixed(0)).join(', ')} µs; empty ${per[kind].empty.map((x) => (x * 1000).toFixed(0)).join(', ')} µs`);
  }
}

/** DUE agents' worth of indexes into the Trigger.dev agents, spread over all of them (busy and quiet). */
function spread(s: Side): number[] {
  return Array.from({ length: DUE }, (_, i) => s.taskAgents[(i * 7) % s.taskAgents.length]!);
}

/** DUE running runs started 3 hours ago on agents with the default 2-hour timeout; one sweepTimeouts pass. */
async function timeoutPass(s: Side): Promise<number> {
  // Untimed: whatever else timed out since the last pass (runs earlier bench runs left in flight reach their
  // timeout at any moment), so the timed pass fails the runs made due here.
  await sweepTimeouts(s.ctx);
  await s.db.query(
    `INSERT INTO runs (agent_id, status, source, external_run_id, input, created_at, started_at, updated_at)
     SELECT a, 'running', 'trigger', 'run_t' || md5(random()::text), '{"document_id": "doc_timeout"}', now() - interval '3 hours', now() - interval '3 hours' + interval '2 seconds', now() - interval '3 hours'
     FROM unnest($1::bigint[]) a`,
    [spread(s)],
  );
  const t0 = performance.now();
  const res = await sweepTimeouts(s.ctx);
  const took = performance.now() - t0;
  // One that reached its timeout in between is failed too (and counted): at least the DUE made due here.
  if (res.running.length < DUE) throw new Error(`timeout sweep on the ${s.name} database failed ${res.running.length} runs, not ${DUE}`);
  return took / res.running.length;
}

/**
 * DUE running runs whose Trigger.dev run exists at the fake (every other one COMPLETED with a ~1 KB output, the
 * rest still EXECUTING), due a minute ago; one pollDueRuns pass (claims, HTTP status reads, writes). The runs left
 * running then stop being polled, so the next pass sees only its own.
 */
async function pollPass(h: Harness, s: Side): Promise<number> {
  const ext = await h.call<string[]>(h.fakes, 'createTaskRuns', { count: DUE, completeEvery: 2, output: POLL_OUTPUT });
  const { rows } = await s.db.query<{ id: number }>(
    `INSERT INTO runs (agent_id, status, source, external_run_id, input, created_at, started_at, updated_at, next_poll_at)
     SELECT a, 'running', 'trigger', e, '{"document_id": "doc_poll"}', now() - interval '5 minutes', now() - interval '5 minutes', now() - interval '5 minutes', now() - interval '1 minute'
     FROM unnest($1::bigint[], $2::text[]) AS t(a, e) RETURNING id`,
    [spread(s), ext],
  );
  const t0 = performance.now();
  const res = await pollDueRuns(s.ctx);
  const took = performance.now() - t0;
  await s.db.query('UPDATE runs SET next_poll_at = NULL, poll_lease_until = NULL WHERE id = ANY($1::bigint[]) AND next_poll_at IS NOT NULL', [rows.map((x) => x.id)]);
  await h.call(h.fakes, 'reset');
  const kinds = new Map<string, number>();
  for (const o of res.outcomes) kinds.set(o.kind, (kinds.get(o.kind) ?? 0) + 1);
  if (res.polled !== DUE || (kinds.get('terminal') ?? 0) !== DUE / 2) {
    throw new Error(`poll sweep on the ${s.name} database: ${res.polled} polled (${[...kinds].map(([k, n]) => `${n} ${k}`).join(', ')}), not ${DUE}`);
  }
  return took / DUE;
}
