// Issue 39 item 4 "Data lifecycle, opt-in" (decisions.md "Data lifecycle"): ARS_RUN_SCRUB_DAYS empties the input,
// output and error of terminal runs unchanged for that many days, and the copy an outbox row keeps for its webhook
// body; the row, its status, outputs and updated_at stay, so the dashboard's figures do not move. A run still active
// when the scrub passed it is scrubbed once it has finished and that is old enough.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pruneExpired } from '../../src/background/retention.ts';
import { refreshRollup } from '../../src/runs/run-rollup.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { dashboard, type DashboardQuery } from '../../src/admin/dashboard.ts';
import { scrape } from '../metrics/exposition.ts';
import { bulkRuns, DAY, HOUR } from './lifecycle-helpers.ts';

const clock = new ManualClock(new Date('2026-06-30T12:00:00Z'));
const SCRUB_DAYS = 5;
let t: TestApp;
let agents: SeededAgent[];
let orgId: string;

beforeAll(async () => {
  t = await createTestApp({ clock, config: { lifecycle: { runRetentionDays: null, runScrubDays: SCRUB_DAYS, auditRetentionDays: null } } });
  orgId = await seedOrg(t);
  agents = [await seedAgent(t, { orgId }), await seedAgent(t, { orgId })];
  await bulkRuns(t, agents.map((a) => a.agent.id), { from: new Date('2026-06-10T00:00:00Z'), days: 20, runs: 4_000, now: clock.now() });
  await refreshRollup(t.db, clock.now());
});
afterAll(() => t.close());

const PERIODS: DashboardQuery[] = [
  { from: '2026-06-01T00:00:00Z', to: '2026-07-01T00:00:00Z' },
  { from: '2026-06-22T07:00:00Z', to: '2026-06-26T00:00:00Z' },
];
const figures = () => Promise.all(PERIODS.flatMap((p) => [p, { ...p, orgId }]).map((q) => dashboard(t.ctx, q)));

/** Every run's id, status, outputs, updated_at and whether it still holds data, as the test reads them. */
async function runs() {
  const { rows } = await t.db.query<{ id: string; status: string; outputs: string; updated_at: Date; has_data: boolean; scrubbed_at: Date | null }>(
    `SELECT id, status, outputs, updated_at, scrubbed_at,
       (input <> '{}'::jsonb OR output_data IS NOT NULL OR error IS NOT NULL OR wait_state IS NOT NULL) AS has_data
     FROM runs ORDER BY id`,
  );
  return rows;
}

describe('issue 39 item 4: ARS_RUN_SCRUB_DAYS', () => {
  it('scrubs terminal runs unchanged since the cutoff, and their outbox copies; keeps every row, status, outputs and figure', async () => {
    const cutoff = new Date(clock.now().getTime() - SCRUB_DAYS * DAY);
    const before = await runs();
    const due = before.filter((r) => ['completed', 'failed', 'cancelled'].includes(r.status) && r.updated_at < cutoff);
    expect(due.length).toBeGreaterThan(2_000); // several batches
    const figuresBefore = await figures();
    const metrics = await scrape(t.app);

    expect(await pruneExpired(t.ctx)).toMatchObject({ runsScrubbed: due.length, runs: 0 });

    const after = await runs();
    const dueIds = new Set(due.map((r) => r.id));
    expect(after.map(({ id, status, outputs, updated_at }) => ({ id, status, outputs, updated_at }))).toEqual(
      before.map(({ id, status, outputs, updated_at }) => ({ id, status, outputs, updated_at })),
    );
    for (const r of after) {
      expect({ id: r.id, has_data: r.has_data, scrubbed: r.scrubbed_at !== null }).toEqual({ id: r.id, has_data: !dueIds.has(r.id), scrubbed: dueIds.has(r.id) });
    }
    const copies = await t.db.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM outbox o JOIN runs r ON r.id = o.run_id
       WHERE r.scrubbed_at IS NOT NULL AND (o.snapshot->'input' <> '{}'::jsonb OR o.snapshot->'output_data' <> 'null'::jsonb)`,
    );
    expect(copies.rows[0]!.n).toBe(0);
    const kept = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox o JOIN runs r ON r.id = o.run_id WHERE r.scrubbed_at IS NULL AND o.snapshot->'output_data' <> 'null'::jsonb");
    expect(kept.rows[0]!.n).toBeGreaterThan(0); // recent runs' copies stay
    expect(await figures()).toEqual(figuresBefore);
    await refreshRollup(t.db, clock.now());
    expect(await figures()).toEqual(figuresBefore);
    const moved = (await scrape(t.app)).value('ars_retention_pruned_rows_total', { table: 'runs_scrubbed' }) - metrics.value('ars_retention_pruned_rows_total', { table: 'runs_scrubbed' });
    expect(moved).toBe(due.length);
    expect(await pruneExpired(t.ctx)).toMatchObject({ runsScrubbed: 0 }); // the cursor is past them
  });

  it('a run the scrub passed while it was waiting is scrubbed once its finish is old enough', async () => {
    const { rows: [run] } = await t.db.query<{ id: string }>(
      "SELECT id FROM runs WHERE status = 'waiting' AND updated_at < $1 ORDER BY id LIMIT 1",
      [new Date(clock.now().getTime() - SCRUB_DAYS * DAY)],
    );
    await transition(t.db, Number(run!.id), 'terminal', 'completed', clock.now(), { outputData: { answer: 'late' }, outputs: 2 }, { via: 'admin' });
    clock.advance(SCRUB_DAYS * DAY - HOUR);
    await pruneExpired(t.ctx);
    expect((await runs()).find((r) => r.id === run!.id)).toMatchObject({ has_data: true, scrubbed_at: null });
    clock.advance(2 * HOUR);
    await pruneExpired(t.ctx);
    expect((await runs()).find((r) => r.id === run!.id)).toMatchObject({ status: 'completed', has_data: false, scrubbed_at: clock.now() });
  });
});
