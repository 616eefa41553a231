// Issue 14 "Fast with real data": the dashboard's closed days come from run_day_rollup (runs/run-rollup.ts). Its
// answer must be the raw aggregate's, whatever the period's ends, filters, and changes since the last refresh.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { dashboard, type DashboardQuery } from '../../src/admin/dashboard.ts';
import { dayStart, nextDayStart, refreshRollup, rollupState, spanCover } from '../../src/runs/run-rollup.ts';
import { trimmedEnds } from '../../src/runs/run-aggregate.ts';

const HOUR = 3_600_000;
const clock = new ManualClock(new Date('2026-05-20T12:00:00Z'));
let t: TestApp;
let orgId: string;
let agents: SeededAgent[];
const active: number[] = [];

beforeAll(async () => {
  t = await createTestApp({ clock });
  orgId = await seedOrg(t);
  agents = [await seedAgent(t, { orgId }), await seedAgent(t, { orgId }), await seedAgent(t)];
  // 40 days of runs, every 7 hours (so days split unevenly), in every status, with outputs.
  const start = Date.parse('2026-04-10T03:00:00Z');
  for (let i = 0; start + i * 7 * HOUR < clock.now().getTime(); i++) {
    const now = new Date(start + i * 7 * HOUR);
    const agent = agents[i % 3]!;
    const { id } = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now });
    if (i % 5 === 0) active.push(id);
    else if (i % 5 === 1) await transition(t.db, id, 'terminal', 'failed', now, { error: 'x' }, { via: 'admin' });
    else if (i % 5 === 2) await transition(t.db, id, 'started', 'running', now, {}, { via: 'admin' });
    else await transition(t.db, id, 'terminal', 'completed', now, { outputData: {}, outputs: i }, { via: 'admin' });
  }
});
afterAll(() => t.close());

/** The dashboard as the runs table alone answers it (no rollup state: every row is read raw). */
async function raw(q: DashboardQuery) {
  const saved = await t.db.query('SELECT * FROM run_rollup_state');
  await t.db.query('DELETE FROM run_rollup_state');
  try {
    return await dashboard(t.ctx, q);
  } finally {
    for (const r of saved.rows) await t.db.query('INSERT INTO run_rollup_state (closed_before, fresh_through) VALUES ($1, $2)', [r.closed_before, r.fresh_through]);
  }
}

/**
 * The tables derived from run_day_rollup (migration 0018) hold exactly its sums: each organization's day, and each
 * agent's span of closed days, none reaching the open day.
 */
async function expectDerivedExact(): Promise<void> {
  // Every count column and outputs, written out here rather than taken from the module under test.
  const columns = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled', 'outputs'];
  const SUMS = columns.map((c) => `sum(${c})::bigint AS ${c}`).join(', ');
  const differ = (x: string, y: string) => `(${columns.map((c) => `${x}.${c}`).join(', ')}) IS DISTINCT FROM (${columns.map((c) => `${y}.${c}`).join(', ')})`;
  const org = await t.db.query(
    `SELECT o.* FROM run_day_org_rollup o FULL JOIN (
       SELECT r.day, a.org_id, ${SUMS} FROM run_day_rollup r JOIN agents a ON a.id = r.agent_id GROUP BY 1, 2) s ON s.day = o.day AND s.org_id = o.org_id
     WHERE o.day IS NULL OR s.day IS NULL OR ${differ('o', 's')}`,
  );
  expect(org.rows).toEqual([]);
  const spans = await t.db.query(
    `SELECT s.span, s.start_day, s.agent_id FROM run_span_rollup s CROSS JOIN LATERAL (
       SELECT ${SUMS} FROM run_day_rollup r WHERE r.agent_id = s.agent_id AND r.day >= s.start_day AND r.day < s.start_day + s.span) d
     WHERE ${differ('s', 'd')}
       OR s.start_day + s.span > (SELECT closed_before FROM run_rollup_state)`,
  );
  expect(spans.rows).toEqual([]);
  // Every closed span with runs is there: the 40 days hold spans of 2 to 32 days.
  const sizes = await t.db.query<{ span: number }>('SELECT DISTINCT span FROM run_span_rollup ORDER BY span');
  expect(sizes.rows.map((r) => r.span)).toEqual([2, 4, 8, 16, 32]);
}

const PERIODS: DashboardQuery[] = [
  {}, // the last 30 days up to now: a partial first day and today
  { from: '2026-04-01T00:00:00Z', to: '2026-05-21T00:00:00Z' },
  { from: '2026-04-15T05:30:00+02:00', to: '2026-05-19T18:45:00Z' },
  { from: '2026-05-01T00:00:00Z', to: '2026-05-02T00:00:00Z' },
  // Partial closed days nearer their start (first) or their end (last): taken whole from the rollup less the runs
  // outside the period. Runs come every 7 hours, so an agent's only runs of such a day may all fall outside it.
  { from: '2026-04-12T01:30:00Z', to: '2026-05-18T22:15:00Z' },
  { from: '2026-04-21T09:00:00Z', to: '2026-05-03T20:00:00Z' },
  { from: '2026-04-25T05:00:00Z', to: '2026-04-26T17:00:00Z' },
  { from: '2026-04-28T10:59:00Z' }, // 30 days to it
];

describe('issue 14: the dashboard rollup', () => {
  it('answers exactly as the raw aggregate, for any period, org and agent filter', async () => {
    expect(await rollupState(t.db)).toBeNull();
    await refreshRollup(t.db, clock.now());
    expect(await rollupState(t.db)).toEqual({ closedBefore: new Date('2026-05-20T00:00:00Z'), freshThrough: new Date('2026-05-20T11:59:00Z') });
    const rolled = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM run_day_rollup');
    expect(rolled.rows[0]!.n).toBeGreaterThan(40);
    await expectDerivedExact();
    for (const p of PERIODS) {
      for (const filter of [{}, { orgId }, { agentId: agents[1]!.agent.id }]) {
        const q = { ...p, ...filter };
        const expected = await raw(q);
        expect(expected.totals.runs).toBeGreaterThan(0);
        expect(await dashboard(t.ctx, q)).toEqual(expected);
      }
    }
  });

  it('stays exact when a closed day’s run changes after the refresh, and the next refresh takes the change in', async () => {
    await refreshRollup(t.db, clock.now());
    const runId = active[1]!; // created weeks ago, still queued
    clock.advance(HOUR);
    await transition(t.db, runId, 'terminal', 'completed', clock.now(), { outputData: {}, outputs: 1000 }, { via: 'admin' });
    const q = { from: '2026-04-01T00:00:00Z', to: '2026-05-21T00:00:00Z' };
    const expected = await raw(q);
    expect(await dashboard(t.ctx, q)).toEqual(expected);
    // The changed run was created 2026-04-11T14:00Z: a period starting early that day, which would otherwise be
    // taken whole from the rollup less its first two hours (a run at 00:00), reads that day's part from runs.
    const trimmed = { from: '2026-04-11T02:00:00Z', to: '2026-05-21T00:00:00Z' };
    expect(await dashboard(t.ctx, trimmed)).toEqual(await raw(trimmed));

    clock.advance(2 * 60_000); // past the refresh's margin
    expect(await refreshRollup(t.db, clock.now())).toEqual({ days: 1 });
    await expectDerivedExact();
    expect(await dashboard(t.ctx, q)).toEqual(expected);
  });

  it("today's runs created before the refresh count as of that refresh (a change lands at the next one); later runs count at once (issue 15)", async () => {
    const today = { from: '2026-05-20T00:00:00Z', to: '2026-05-21T00:00:00Z' };
    const early = await insertRun(t.db, { agentId: agents[0]!.agent.id, status: 'queued', source: 'trigger', now: new Date(clock.now().getTime() - 2 * HOUR) });
    await refreshRollup(t.db, clock.now());
    const before = await dashboard(t.ctx, today);
    expect(before).toEqual(await raw(today));
    const late = await insertRun(t.db, { agentId: agents[0]!.agent.id, status: 'queued', source: 'trigger', now: clock.now() });
    await transition(t.db, early.id, 'terminal', 'failed', clock.now(), { error: 'x' }, { via: 'admin' });

    const now = await dashboard(t.ctx, today);
    // `late` is read from runs; `early` still counts as queued, as at the refresh.
    expect(now.totals.by_status).toEqual({ ...before.totals.by_status, queued: before.totals.by_status.queued + 1 });
    expect((await raw(today)).totals.by_status).toEqual({ ...before.totals.by_status, failed: before.totals.by_status.failed + 1 });

    clock.advance(2 * 60_000); // past the refresh's margin
    await refreshRollup(t.db, clock.now());
    expect(await dashboard(t.ctx, today)).toEqual(await raw(today));
    expect(late.id).toBeGreaterThan(early.id);
  });

  it('a new day closes into the rollup at the next refresh', async () => {
    clock.set(new Date('2026-05-22T00:30:00Z'));
    const { id } = await insertRun(t.db, { agentId: agents[0]!.agent.id, status: 'queued', source: 'trigger', now: new Date('2026-05-21T23:00:00Z') });
    expect(id).toBeGreaterThan(0);
    const q = { from: '2026-05-01T00:00:00Z', to: '2026-05-22T00:00:00Z' };
    const expected = await raw(q);
    expect(await dashboard(t.ctx, q)).toEqual(expected);
    expect(await refreshRollup(t.db, clock.now())).toEqual({ days: 2 }); // 20 and 21 May closed
    expect((await rollupState(t.db))!.closedBefore).toEqual(new Date('2026-05-22T00:00:00Z'));
    await expectDerivedExact();
    expect(await dashboard(t.ctx, q)).toEqual(expected);
  });

  it('takes a partial closed end day whole from the rollup only when the part outside the period is the shorter: at most half a day read from runs (issue 15)', () => {
    const closedBefore = new Date('2026-05-20T00:00:00Z');
    const ends = (from: string, to: string) => {
      const f = { from: new Date(from), to: new Date(to) };
      const end = new Date(Math.min(dayStart(f.to).getTime(), closedBefore.getTime()));
      const r = trimmedEnds(f, nextDayStart(f.from), end, closedBefore);
      return { lo: r.lo.toISOString(), hi: r.hi.toISOString(), outside: r.outside.map(([a, b]) => [a.toISOString(), b.toISOString()]) };
    };
    // Early in the first day, late in the last: both widened, the short parts outside subtracted.
    expect(ends('2026-04-12T01:30:00Z', '2026-05-18T22:15:00Z')).toEqual({
      lo: '2026-04-12T00:00:00.000Z',
      hi: '2026-05-19T00:00:00.000Z',
      outside: [['2026-04-12T00:00:00.000Z', '2026-04-12T01:30:00.000Z'], ['2026-05-18T22:15:00.000Z', '2026-05-19T00:00:00.000Z']],
    });
    // Late in the first day, early in the last: the parts inside are the shorter, read from runs as they are.
    expect(ends('2026-04-12T13:00:00Z', '2026-05-18T11:00:00Z')).toEqual({ lo: '2026-04-13T00:00:00.000Z', hi: '2026-05-18T00:00:00.000Z', outside: [] });
    // Ends on day boundaries: nothing partial.
    expect(ends('2026-04-12T00:00:00Z', '2026-05-18T00:00:00Z')).toEqual({ lo: '2026-04-12T00:00:00.000Z', hi: '2026-05-18T00:00:00.000Z', outside: [] });
    // A last day not closed yet (today) is never taken from the rollup as a whole day.
    expect(ends('2026-04-12T13:00:00Z', '2026-05-20T23:00:00Z').hi).toBe('2026-05-20T00:00:00.000Z');
    // Within one day: no whole day to widen to.
    expect(ends('2026-04-12T01:00:00Z', '2026-04-12T23:00:00Z')).toEqual({ lo: '2026-04-13T00:00:00.000Z', hi: '2026-04-12T00:00:00.000Z', outside: [] });
  });

  it('covers whole days with aligned spans, widest first: at most two of each size (issue 15)', () => {
    expect(spanCover(10, 10)).toEqual([]);
    expect(spanCover(7, 8)).toEqual([{ start: 7, span: 1 }]);
    expect(spanCover(5, 20)).toEqual([
      { start: 5, span: 1 }, { start: 6, span: 2 }, { start: 8, span: 8 }, { start: 16, span: 4 },
    ]);
    // 366 days: each day once, in order, every span aligned, at most two of each size.
    const cover = spanCover(20_200, 20_566);
    expect(cover.reduce((n, s) => (expect(s.start).toBe(n), expect(s.start % s.span).toBe(0), n + s.span), 20_200)).toBe(20_566);
    for (const size of new Set(cover.map((s) => s.span))) expect(cover.filter((s) => s.span === size).length).toBeLessThanOrEqual(2);
    expect(Math.max(...cover.map((s) => s.span))).toBe(256);
  });
});
