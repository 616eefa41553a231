// Issue 39 item 4 "Data lifecycle, opt-in" (decisions.md "Data lifecycle"): ARS_RUN_RETENTION_DAYS deletes terminal
// runs that finished before the cutoff with everything that names them, in batches; the dashboard keeps its totals
// (before and after the rollup's refresh, its first build, and a later change of a surviving run of a partly deleted
// day). Unset, nothing about runs is deleted (spec 2.2: "retained indefinitely").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, seedAgent, seedOrg, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pruneExpired } from '../../src/background/retention.ts';
import { refreshRollup } from '../../src/runs/run-rollup.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { dashboard, type Dashboard, type DashboardQuery } from '../../src/admin/dashboard.ts';
import { scrape } from '../metrics/exposition.ts';
import { bulkRuns, DAY, HOUR } from './lifecycle-helpers.ts';

const clock = new ManualClock(new Date('2026-06-30T12:00:00Z'));
let t: TestApp;
let orgId: string;
let agents: SeededAgent[];
const RETENTION_DAYS = 10;
/** Finished before this: deleted. Runs created 06-18 and 06-19 finish on either side of it (partly deleted days). */
const cutoff = new Date(clock.now().getTime() - RETENTION_DAYS * DAY);

beforeAll(async () => {
  t = await createTestApp({ clock, config: { lifecycle: { runRetentionDays: RETENTION_DAYS, runScrubDays: null, auditRetentionDays: null } } });
  orgId = await seedOrg(t);
  agents = [await seedAgent(t, { orgId }), await seedAgent(t, { orgId }), await seedAgent(t)];
  await bulkRuns(t, agents.map((a) => a.agent.id), { from: new Date('2026-06-10T00:00:00Z'), days: 20, runs: 6_000, now: clock.now() });
  await refreshRollup(t.db, clock.now());
});
afterAll(() => t.close());

const PERIODS: DashboardQuery[] = [
  { from: '2026-06-01T00:00:00Z', to: '2026-07-01T00:00:00Z' },
  { from: '2026-06-12T00:00:00Z', to: '2026-06-21T00:00:00Z' },
  { from: '2026-06-18T00:00:00Z', to: '2026-06-19T00:00:00Z' }, // partly deleted
  { from: '2026-06-19T00:00:00Z', to: '2026-06-20T00:00:00Z' }, // partly deleted
  { from: '2026-06-10T00:00:00Z', to: '2026-06-11T00:00:00Z' }, // every terminal run deleted
];
const queries = (): DashboardQuery[] =>
  PERIODS.flatMap((p) => [p, { ...p, orgId }, { ...p, agentId: agents[2]!.agent.id }]);
const figures = async (): Promise<Dashboard[]> => Promise.all(queries().map((q) => dashboard(t.ctx, q)));

/** Which finished-before-cutoff runs exist, per creation day: the test's own count, not the module's. */
async function deletable(): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>(
    "SELECT count(*)::int AS n FROM runs WHERE status IN ('completed', 'failed', 'cancelled') AND completed_at < $1",
    [cutoff],
  );
  return rows[0]!.n;
}

/** `d` with one run of `agentId`, created on `day`, moved from `from` to `to` gaining `outputs` (the periods above). */
function moved(d: Dashboard, q: DashboardQuery, day: string, agentId: number, change: { from: string; to: string; outputs: number }): Dashboard {
  const inPeriod = (!q.from || q.from <= `${day}T00:00:00Z`) && (!q.to || q.to > `${day}T00:00:00Z`);
  const ofAgent = q.agentId === undefined || q.agentId === agentId;
  if (!inPeriod || !ofAgent || (q.orgId !== undefined && agentId === agents[2]!.agent.id)) return d;
  const e = structuredClone(d);
  const row = (status: string) => e.runs_by_status.find((r) => r.day === day && r.status === status);
  row(change.from)!.count -= 1;
  const to = row(change.to);
  if (to) to.count += 1;
  else e.runs_by_status.push({ day, status: change.to as never, count: 1 });
  e.runs_by_status = e.runs_by_status.filter((r) => r.count > 0).sort((x, y) => x.day.localeCompare(y.day) || x.status.localeCompare(y.status));
  e.outputs_by_day.find((r) => r.day === day)!.outputs += change.outputs;
  const a = e.by_agent.find((r) => r.agentId === agentId)!;
  a.outputs += change.outputs;
  e.by_agent.sort((x, y) => y.outputs - x.outputs || y.runs - x.runs || x.agentId - y.agentId);
  e.totals.by_status[change.from as 'waiting'] -= 1;
  e.totals.by_status[change.to as 'completed'] += 1;
  e.totals.outputs += change.outputs;
  return e;
}

describe('issue 39 item 4: ARS_RUN_RETENTION_DAYS', () => {
  it('unset (the contract\'s default), a pass deletes no run, however old', async () => {
    const keep = await createTestApp({ clock });
    try {
      const agent = await seedAgent(keep);
      await bulkRuns(keep, [agent.agent.id], { from: new Date('2025-01-01T00:00:00Z'), days: 30, runs: 1_000, now: clock.now() });
      await refreshRollup(keep.db, clock.now());
      expect(keep.ctx.config.lifecycle.runRetentionDays).toBeNull();
      expect(await pruneExpired(keep.ctx)).toMatchObject({ runs: 0, runsScrubbed: 0, audit: 0 });
      expect(await countRows(keep, 'runs')).toBe(1_000);
    } finally {
      await keep.close();
    }
  });

  it('deletes terminal runs finished before the cutoff, with their timeline, outbox rows and keys; the dashboard keeps every figure', async () => {
    const before = await figures();
    const total = await countRows(t, 'runs');
    const expected = await deletable();
    expect(expected).toBeGreaterThan(2_000); // several batches
    // One of them was replayed: the replay stays, naming no run any more.
    const { rows: [old] } = await t.db.query<{ id: string; agent_id: string }>(
      "SELECT id, agent_id FROM runs WHERE status = 'completed' AND completed_at < $1 ORDER BY id LIMIT 1",
      [cutoff],
    );
    const { rows: [replay] } = await t.db.query<{ id: string }>(
      "INSERT INTO runs (agent_id, status, source, replay_of, created_at, updated_at) VALUES ($1, 'queued', 'admin', $2, $3, $3) RETURNING id",
      [old!.agent_id, old!.id, clock.now()],
    );
    const metrics = await scrape(t.app);

    const result = await pruneExpired(t.ctx);
    expect(result.runs).toBe(expected);
    expect(await deletable()).toBe(0);
    expect(await countRows(t, 'runs')).toBe(total + 1 - expected);
    // Active runs, and runs finished after the cutoff, stay.
    const kept = await t.db.query<{ n: number }>(
      "SELECT count(*)::int AS n FROM runs WHERE status NOT IN ('completed', 'failed', 'cancelled') OR completed_at >= $1",
      [cutoff],
    );
    expect(kept.rows[0]!.n).toBe(total + 1 - expected);
    for (const table of ['run_transitions', 'outbox', 'idempotency_keys']) {
      const orphans = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table} x WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = x.run_id)`);
      expect(orphans.rows[0]!.n, table).toBe(0);
    }
    expect(result.runChildren).toBeGreaterThan(expected); // a timeline entry each, and some outbox rows and keys
    const replayed = await t.db.query<{ replay_of: string | null }>('SELECT replay_of FROM runs WHERE id = $1', [replay!.id]);
    expect(replayed.rows[0]!.replay_of).toBeNull();
    await t.db.query('DELETE FROM runs WHERE id = $1', [replay!.id]); // created today: not in the periods' closed days
    expect((await scrape(t.app)).value('ars_retention_pruned_rows_total', { table: 'runs' }) - metrics.value('ars_retention_pruned_rows_total', { table: 'runs' })).toBe(expected);

    expect(await figures()).toEqual(before); // before the refresh
    await refreshRollup(t.db, clock.now());
    expect(await figures()).toEqual(before); // after it
    await t.db.query('DELETE FROM run_rollup_state'); // the rollup's first build (after a migration that resets it)
    expect(await figures()).toEqual(before); // read from runs and the deleted runs' counts alone
    await refreshRollup(t.db, clock.now());
    expect(await figures()).toEqual(before);
    expect(await pruneExpired(t.ctx)).toMatchObject({ runs: 0 }); // nothing left to do
  });

  it('a surviving run of a partly deleted day changes later: the day is recomputed whole', async () => {
    const before = await figures();
    const { rows: [run] } = await t.db.query<{ id: string; agent_id: string }>(
      "SELECT id, agent_id FROM runs WHERE status = 'waiting' AND created_at >= '2026-06-18' AND created_at < '2026-06-19' ORDER BY id LIMIT 1",
    );
    const deletedThatDay = await t.db.query<{ n: number }>("SELECT (completed + failed + cancelled)::int AS n FROM run_day_deleted WHERE day = '2026-06-18' AND agent_id = $1", [run!.agent_id]);
    expect(deletedThatDay.rows[0]!.n).toBeGreaterThan(0);
    clock.advance(HOUR);
    await transition(t.db, Number(run!.id), 'terminal', 'completed', clock.now(), { outputData: {}, outputs: 7 }, { via: 'admin' });
    const expected = queries().map((q, i) => moved(before[i]!, q, '2026-06-18', Number(run!.agent_id), { from: 'waiting', to: 'completed', outputs: 7 }));
    expect(await figures()).toEqual(expected); // the changed day read from runs and its deleted runs
    await refreshRollup(t.db, clock.now());
    expect(await figures()).toEqual(expected); // and recomputed so by the refresh
  });

  it('a period with an end inside a partly deleted day counts its deleted runs as created at 00:00 UTC', async () => {
    const day = (from: string, to: string) => dashboard(t.ctx, { from, to }).then((d) => d.totals.runs);
    const whole = await day('2026-06-19T00:00:00Z', '2026-06-20T00:00:00Z');
    const morning = await day('2026-06-19T00:00:00Z', '2026-06-19T09:30:00Z');
    const rest = await day('2026-06-19T09:30:00Z', '2026-06-20T00:00:00Z');
    const deleted = await t.db.query<{ n: number }>("SELECT sum(queued + running + waiting + completed + failed + cancelled)::int AS n FROM run_day_deleted WHERE day = '2026-06-19'");
    const liveMorning = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE created_at >= '2026-06-19' AND created_at < '2026-06-19T09:30:00Z'");
    expect(morning).toBe(deleted.rows[0]!.n + liveMorning.rows[0]!.n);
    expect(morning + rest).toBe(whole);
  });

  it('a run changed since the rollup\'s last refresh waits for the next one: the rollup must hold it as it is', async () => {
    const agentId = agents[0]!.agent.id;
    await pruneExpired(t.ctx); // the runs the clock's moves since made old enough
    const { rows: [late] } = await t.db.query<{ id: string }>(
      `INSERT INTO runs (agent_id, status, source, outputs, created_at, started_at, completed_at, updated_at)
       VALUES ($1, 'completed', 'trigger', 3, '2026-06-15T08:00:00Z', '2026-06-15T08:00:00Z', '2026-06-15T09:00:00Z', $2) RETURNING id`,
      [agentId, clock.now()], // finished long ago, its outputs reported just now
    );
    const before = await figures();
    expect(await pruneExpired(t.ctx)).toMatchObject({ runs: 0 });
    clock.advance(2 * 60_000);
    await refreshRollup(t.db, clock.now());
    expect(await figures()).toEqual(before);
    expect((await pruneExpired(t.ctx)).runs).toBeGreaterThanOrEqual(1); // and whatever the 2 minutes made old
    expect(await t.db.query('SELECT 1 FROM runs WHERE id = $1', [late!.id]).then((r) => r.rows)).toEqual([]);
    expect(await figures()).toEqual(before);
  });
});
