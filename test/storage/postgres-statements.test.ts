// storage/postgres-db.ts: statements run with parameters more than twice become named prepared statements; a
// table changed under a prepared `SELECT *` (another instance's migration) must not break the query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from '../helpers/test-db.ts';
import { openPostgres } from '../../src/storage/postgres-db.ts';
import { isDatabaseUnavailable } from '../../src/storage/db-unavailable.ts';

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

describe.skipIf(!onPostgres)('named prepared statements on PostgreSQL', () => {
  it('a repeated statement is prepared once per connection and answers as before', async () => {
    await t.db.exec('CREATE TABLE prep_a (id int PRIMARY KEY, v text); INSERT INTO prep_a VALUES (1, $$one$$), (2, $$two$$)');
    const sql = 'SELECT v FROM prep_a WHERE id = $1';
    for (let i = 0; i < 6; i++) expect((await t.db.query<{ v: string }>(sql, [1 + (i % 2)])).rows[0]!.v).toBe(i % 2 ? 'two' : 'one');
    // In a transaction the connection is pinned: the statement is in its prepared list after the third use.
    const prepared = await t.db.transaction(async (tx) => {
      for (let i = 0; i < 3; i++) await tx.query(sql, [1]);
      return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', [sql])).rows[0]!.n;
    });
    expect(prepared).toBe(1);
  });

  it('a named statement that fails gives its connection back, rejects with the caller in its stack, and rolls its transaction back', async () => {
    const db = await openPostgres(t.url!, { poolSize: 1, connectTimeoutMs: 1_000 });
    try {
      await db.exec('CREATE TABLE prep_c (id int PRIMARY KEY)');
      const sql = 'SELECT 10 / $1::int AS q';
      // Past the second use the statement is named (prepared); each failure must free the pool's only connection.
      for (let i = 0; i < 6; i++) {
        const err = (await db.query(sql, [0]).catch((e: unknown) => e)) as Error & { code?: string };
        expect(err.code).toBe('22012'); // division_by_zero
        expect(err.stack).toContain('postgres-statements.test.ts');
        expect((await db.query<{ q: number }>(sql, [5])).rows).toEqual([{ q: 2 }]);
      }
      const failed = await db
        .transaction(async (tx) => {
          await tx.query('INSERT INTO prep_c (id) VALUES ($1)', [1]);
          await tx.query(sql, [0]);
        })
        .catch((e: { code?: string }) => e.code);
      expect(failed).toBe('22012');
      expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM prep_c WHERE id > $1', [0])).rows).toEqual([{ n: 0 }]);
      const named = await db.transaction(async (tx) => {
        for (let i = 0; i < 3; i++) await tx.query('INSERT INTO prep_c (id) VALUES ($1)', [10 + i]);
        return (await tx.query<{ n: number }>('SELECT count(*)::int AS n FROM pg_prepared_statements WHERE statement = $1', ['INSERT INTO prep_c (id) VALUES ($1)'])).rows[0]!.n;
      });
      expect(named).toBe(1);
      expect((await db.query<{ n: number }>('SELECT count(*)::int AS n FROM prep_c WHERE id > $1', [0])).rows).toEqual([{ n: 3 }]);
    } finally {
      await db.close();
    }
  });

  it('a column added under a prepared SELECT * is answered with the new column, not an error', async () => {
    await t.db.exec('CREATE TABLE prep_b (id int PRIMARY KEY, v text); INSERT INTO prep_b VALUES (1, $$x$$)');
    const sql = 'SELECT * FROM prep_b WHERE id = $1';
    for (let i = 0; i < 30; i++) await t.db.query(sql, [1]); // prepared on several pool connections
    await t.db.exec('ALTER TABLE prep_b ADD COLUMN w text DEFAULT $$added$$');
    for (let i = 0; i < 30; i++) expect((await t.db.query(sql, [1])).rows[0]).toEqual({ id: 1, v: 'x', w: 'added' });
  });
});

describe.skipIf(!onPostgres)('bounded waits on PostgreSQL (issue 11)', () => {
  it('every connection runs under the statement and idle-in-transaction timeouts (15 s by default)', async () => {
    const { rows } = await t.db.query<{ s: string; i: string }>(
      "SELECT current_setting('statement_timeout') AS s, current_setting('idle_in_transaction_session_timeout') AS i",
    );
    expect(rows[0]).toEqual({ s: '15s', i: '15s' });
  });

  it('a statement past the statement timeout fails (57014), which is unavailability (503)', async () => {
    const db = await openPostgres(t.url!, { statementTimeoutMs: 200 });
    try {
      const err = await db.query('SELECT pg_sleep(2)').catch((e: unknown) => e);
      expect(err).toMatchObject({ code: '57014' });
      expect(isDatabaseUnavailable(err)).toBe(true);
    } finally {
      await db.close();
    }
  });

  it('with every pooled connection held, the next query fails after the connect timeout instead of queueing for ever', async () => {
    const db = await openPostgres(t.url!, { poolSize: 1, connectTimeoutMs: 300 });
    try {
      let release!: () => void;
      const holding = db.transaction(() => new Promise<void>((r) => (release = r)));
      await new Promise((r) => setTimeout(r, 50));
      const started = Date.now();
      const err = await db.query('SELECT 1').catch((e: unknown) => e);
      expect(Date.now() - started).toBeLessThan(2_000);
      expect(isDatabaseUnavailable(err)).toBe(true);
      release();
      await holding;
      expect((await db.query<{ one: number }>('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]); // the pool recovers
    } finally {
      await db.close();
    }
  });
});
