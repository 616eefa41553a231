// storage/postgres-db.ts: statements run with parameters more than twice become named prepared statements; a
// table changed under a prepared `SELECT *` (another instance's migration) must not break the query.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDb, onPostgres, type TestDb } from '../helpers/test-db.ts';

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

  it('a column added under a prepared SELECT * is answered with the new column, not an error', async () => {
    await t.db.exec('CREATE TABLE prep_b (id int PRIMARY KEY, v text); INSERT INTO prep_b VALUES (1, $$x$$)');
    const sql = 'SELECT * FROM prep_b WHERE id = $1';
    for (let i = 0; i < 30; i++) await t.db.query(sql, [1]); // prepared on several pool connections
    await t.db.exec('ALTER TABLE prep_b ADD COLUMN w text DEFAULT $$added$$');
    for (let i = 0; i < 30; i++) expect((await t.db.query(sql, [1])).rows[0]).toEqual({ id: 1, v: 'x', w: 'added' });
  });
});
