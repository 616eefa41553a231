// Every test that touches storage runs on PGlite, and on real PostgreSQL when TEST_DATABASE_URL is set (CI).
// On PostgreSQL each test file gets a fresh database of its own, dropped at the end.
import { randomBytes } from 'node:crypto';
import { openAsBlob } from 'node:fs';
import { inject } from 'vitest';
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

let template: Promise<Blob | undefined> | undefined;

/** The migrated data directory test/global-setup.ts dumped (one Blob per worker); none outside that setup. */
function migratedTemplate(): Promise<Blob | undefined> {
  const file = inject('pgliteTemplate');
  template ??= file ? openAsBlob(file) : Promise.resolve(undefined);
  return template;
}

/** On `serverUrl` (TEST_DATABASE_URL by default; a fault test passes its own cluster's), else on PGlite. */
export async function createTestDb(serverUrl: string | null = TEST_DATABASE_URL): Promise<TestDb> {
  if (!serverUrl) {
    const db = await openPGlite(undefined, await migratedTemplate());
    await migrate(db); // nothing left to apply on the template; without one, the whole schema
    // Copies of one template share its deployment id (migration 0003): each test database is a deployment of its own.
    await db.query('UPDATE service_identity SET deployment_id = gen_random_uuid()::text');
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
