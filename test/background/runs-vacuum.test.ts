// Issue 15, decisions.md "Scale": runs is vacuumed with index cleanup once a day, by one instance, so that pages
// holding dead line pointers become all-visible again (autovacuum leaves them below 2% of the table's pages). A
// service that does not own runs says so rather than letting PostgreSQL skip the table with a warning.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { claimPass, mayVacuumRuns, RUNS_VACUUM_EVERY_MS, RUNS_VACUUM_PASS, vacuumRunsIfDue } from '../../src/background/runs-vacuum.ts';

const HOUR = 3_600_000;
let t: TestApp;
const clock = new ManualClock(new Date('2026-03-20T12:00:00Z'));

beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(() => t.close());

/** How many times runs has been vacuumed by hand (VACUUM reports to the shared statistics at once). */
async function vacuumCount(): Promise<number> {
  const { rows } = await t.db.query<{ n: string }>("SELECT vacuum_count AS n FROM pg_stat_user_tables WHERE relname = 'runs'");
  return Number(rows[0]!.n);
}

describe('the daily runs vacuum', () => {
  it('vacuums runs on its first check, then not again until a day after it started', async () => {
    const before = await vacuumCount();
    expect(await vacuumRunsIfDue(t.ctx)).toBe(true);
    expect(await vacuumCount()).toBe(before + 1);

    clock.advance(RUNS_VACUUM_EVERY_MS - HOUR);
    expect(await vacuumRunsIfDue(t.ctx)).toBe(false);
    expect(await vacuumCount()).toBe(before + 1);

    clock.advance(HOUR);
    expect(await vacuumRunsIfDue(t.ctx)).toBe(true);
    expect(await vacuumCount()).toBe(before + 2);
  });

  it('is claimed by exactly one of several instances checking at once', async () => {
    const at = new Date(clock.now().getTime() + 2 * RUNS_VACUUM_EVERY_MS);
    const claims = await Promise.all(Array.from({ length: 5 }, () => claimPass(t.db, RUNS_VACUUM_PASS, at, RUNS_VACUUM_EVERY_MS)));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });
});

describe('who may vacuum runs', () => {
  it('the suite\'s user, which owns the tables', async () => {
    expect(await mayVacuumRuns(t.db)).toBe(true);
  });

  // PostgreSQL answers a VACUUM by another role with a warning and skips the table: the pass must not claim it ran.
  it.runIf(onPostgres)('not a role that owns neither runs nor the database and is no superuser (PostgreSQL)', async () => {
    const role = `ars_test_${randomBytes(4).toString('hex')}`;
    await t.db.exec(`CREATE ROLE ${role} NOSUPERUSER`);
    try {
      const owns = await t.db.transaction(async (tx) => {
        await tx.exec(`SET LOCAL ROLE ${role}`);
        return mayVacuumRuns(tx);
      });
      expect(owns).toBe(false);
    } finally {
      await t.db.exec(`DROP ROLE ${role}`);
    }
  });
});
