// Db.maintain (src/storage/db.ts): a statement that cannot run in a transaction (the daily VACUUM of runs) runs
// without the statement timeout, and the pooled connection it used gets the timeout back for the next caller.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from '../helpers/test-db.ts';
import { openPostgres } from '../../src/storage/postgres-db.ts';

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

describe('Db.maintain', () => {
  it('runs VACUUM, which a transaction would refuse', async () => {
    await expect(t.db.transaction((tx) => tx.exec('VACUUM runs'))).rejects.toThrow(/transaction block/);
    await expect(t.db.maintain('VACUUM (INDEX_CLEANUP ON) runs')).resolves.toBeUndefined();
  });

  it.runIf(onPostgres)('lifts the statement timeout for its statement only (PostgreSQL)', async () => {
    const one = await openPostgres(t.url!, { poolSize: 1, statementTimeoutMs: 1_000 });
    try {
      // The one connection of this pool: a statement longer than the pool's ceiling passes through maintain…
      await one.maintain('SELECT pg_sleep(1.2)');
      // …and the same connection has the ceiling again afterwards.
      const { rows } = await one.query<{ statement_timeout: string }>('SHOW statement_timeout');
      expect(rows[0]!.statement_timeout).toBe('1s');
      await expect(one.query('SELECT pg_sleep(1.2)')).rejects.toThrow(/statement timeout/);
    } finally {
      await one.close();
    }
  });
});
