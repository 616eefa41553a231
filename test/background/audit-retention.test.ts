// Issue 39 item 4 "Data lifecycle, opt-in" (decisions.md "Data lifecycle"): ARS_AUDIT_RETENTION_DAYS deletes audit
// entries older than that many days, in batches, and nothing else; unset, the audit log is kept whole.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pruneExpired } from '../../src/background/retention.ts';
import { scrape } from '../metrics/exposition.ts';
import { DAY } from './lifecycle-helpers.ts';

const clock = new ManualClock(new Date('2026-06-30T12:00:00Z'));
const AUDIT_DAYS = 30;
let t: TestApp;

/** `n` entries, one every 90 days / n, the newest now: in time order, as they are appended. */
async function entries(app: TestApp, n: number): Promise<void> {
  await app.db.query(
    `INSERT INTO audit_log (at, action, details)
     SELECT $1::timestamptz - (90 * 86400000.0 / $2) * ($2 - k) * interval '1 millisecond', 'agent.key_rotated', '{"kind":"ingest"}'
     FROM generate_series(1, $2::int) AS k ORDER BY k`,
    [clock.now(), n],
  );
}

beforeAll(async () => {
  t = await createTestApp({ clock, config: { lifecycle: { runRetentionDays: null, runScrubDays: null, auditRetentionDays: AUDIT_DAYS } } });
});
afterAll(() => t.close());

describe('issue 39 item 4: ARS_AUDIT_RETENTION_DAYS', () => {
  it('deletes the entries older than the setting, oldest first, in batches; keeps the rest', async () => {
    await entries(t, 4_500);
    const cutoff = new Date(clock.now().getTime() - AUDIT_DAYS * DAY);
    const old = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM audit_log WHERE at < $1', [cutoff]);
    expect(old.rows[0]!.n).toBeGreaterThan(2_000);
    const total = await countRows(t, 'audit_log');
    const metrics = await scrape(t.app);

    expect(await pruneExpired(t.ctx)).toMatchObject({ audit: old.rows[0]!.n, runs: 0, runsScrubbed: 0 });
    const left = await t.db.query<{ n: number; oldest: Date }>('SELECT count(*)::int AS n, min(at) AS oldest FROM audit_log');
    expect(left.rows[0]!.n).toBe(total - old.rows[0]!.n);
    expect(left.rows[0]!.oldest.getTime()).toBeGreaterThanOrEqual(cutoff.getTime());
    const moved = (await scrape(t.app)).value('ars_retention_pruned_rows_total', { table: 'audit_log' }) - metrics.value('ars_retention_pruned_rows_total', { table: 'audit_log' });
    expect(moved).toBe(old.rows[0]!.n);
    expect(await pruneExpired(t.ctx)).toMatchObject({ audit: 0 });
  });

  it('unset (the default), the audit log is kept whole', async () => {
    const keep = await createTestApp({ clock });
    try {
      await entries(keep, 1_000);
      expect(await pruneExpired(keep.ctx)).toMatchObject({ audit: 0 });
      expect(await countRows(keep, 'audit_log')).toBe(1_000);
    } finally {
      await keep.close();
    }
  });
});
