// Every test that touches storage runs on PGlite, and on real PostgreSQL when TEST_DATABASE_URL is set (CI).
// On PostgreSQL each test file gets a fresh database of its own, dropped at the end.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Db } from '../../src/storage/db.ts';
import { openPGlite } from '../../src/storage/pglite-db.ts';
import { openPostgres } from '../../src/storage/postgres-db.ts';
import { migrate } from '../../src/storage/migrate.ts';

export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || null;
export const onPostgres = TEST_DATABASE_URL !== null;

export interface TestDb {
  db: Db;
  /** Another pool on the same database: a second service instance (PostgreSQL only). */
  openAnother(): Promise<Db>;
  drop(): Promise<void>;
}

async function admin<T>(fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: TEST_DATABASE_URL! });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

export async function createTestDb(): Promise<TestDb> {
  if (!TEST_DATABASE_URL) {
    const db = await openPGlite();
    await migrate(db);
    return {
      db,
      openAnother: () => Promise.reject(new Error('a second instance needs PostgreSQL (TEST_DATABASE_URL)')),
      drop: () => db.close(),
    };
  }
  const name = `ars_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin((c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(TEST_DATABASE_URL);
  url.pathname = `/${name}`;
  const opened: Db[] = [];
  const open = async () => {
    const db = await openPostgres(url.toString(), { poolSize: 20 });
    opened.push(db);
    return db;
  };
  const db = await open();
  await migrate(db);
  return {
    db,
    openAnother: open,
    drop: async () => {
      for (const d of opened) await d.close().catch(() => {});
      await admin((c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
