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
  /** The test database's URL (PostgreSQL), for pools a test opens with options of its own; null on PGlite. */
  url: string | null;
  /** Another pool on the same database: a second service instance (PostgreSQL only). */
  openAnother(): Promise<Db>;
  drop(): Promise<void>;
}

async function admin<T>(serverUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: serverUrl });
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end();
  }
}

/** On `serverUrl` (TEST_DATABASE_URL by default; a fault test passes its own cluster's), else on PGlite. */
export async function createTestDb(serverUrl: string | null = TEST_DATABASE_URL): Promise<TestDb> {
  if (!serverUrl) {
    const db = await openPGlite();
    await migrate(db);
    return {
      db,
      url: null,
      openAnother: () => Promise.reject(new Error('a second instance needs PostgreSQL (TEST_DATABASE_URL)')),
      drop: () => db.close(),
    };
  }
  const name = `ars_test_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  await admin(serverUrl, (c) => c.query(`CREATE DATABASE ${name}`));
  const url = new URL(serverUrl);
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
    url: url.toString(),
    openAnother: open,
    drop: async () => {
      for (const d of opened) await d.close().catch(() => {});
      await admin(serverUrl, (c) => c.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`));
    },
  };
}
