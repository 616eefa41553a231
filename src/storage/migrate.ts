// Plain, versioned SQL migrations, applied at start and by `npm run migrate`. Concurrent starters serialize on a
// transaction-scoped advisory lock, so several instances can boot against one database.
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Db } from './db.ts';

const MIGRATIONS_DIR = path.join(path.dirname(fileURLToPath(import.meta.url)), 'migrations');
const LOCK_ID = 0x41525300; // "ARS\0"

/** The migrations this code knows, in order. */
export async function migrationFiles(): Promise<string[]> {
  return (await readdir(MIGRATIONS_DIR)).filter((f) => /^\d{4}_.+\.sql$/.test(f)).sort();
}

/** Which of `files` the database has not applied yet (all of them before the first migration ran). */
export async function pendingMigrations(db: Db, files: readonly string[]): Promise<string[]> {
  const { rows } = await db.query<{ version: string | null }>(
    "SELECT to_regclass('schema_migrations')::text AS version",
  );
  if (rows[0]?.version === null || rows[0]?.version === undefined) return [...files];
  const done = new Set((await db.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
  return files.filter((f) => !done.has(f));
}

export async function migrate(db: Db): Promise<string[]> {
  const files = await migrationFiles();
  return db.transaction(async (tx) => {
    // Waiting for another instance's migration, or rewriting a large table, may take longer than the statement
    // timeout the service's own queries run under.
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    await tx.exec(
      'CREATE TABLE IF NOT EXISTS schema_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set((await tx.query<{ version: string }>('SELECT version FROM schema_migrations')).rows.map((r) => r.version));
    const applied: string[] = [];
    for (const file of files) {
      if (done.has(file)) continue;
      await tx.exec(await readFile(path.join(MIGRATIONS_DIR, file), 'utf8'));
      await tx.query('INSERT INTO schema_migrations (version) VALUES ($1)', [file]);
      applied.push(file);
    }
    return applied;
  });
}
