import path from 'node:path';
import type { Db } from './db.ts';
import { openPGlite } from './pglite-db.ts';
import { openPostgres } from './postgres-db.ts';

/** DATABASE_URL wins; otherwise the embedded PGlite in the data folder. */
export async function openDb(opts: { databaseUrl: string | null; dataDir: string; onError?: (e: Error) => void }): Promise<Db> {
  if (opts.databaseUrl) return openPostgres(opts.databaseUrl, { onError: opts.onError, poolSize: 20 });
  return openPGlite(path.join(opts.dataDir, 'pgdata'));
}
