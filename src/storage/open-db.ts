import path from 'node:path';
import type { Config } from '../config.ts';
import type { Db } from './db.ts';
import { openPGlite } from './pglite-db.ts';
import { openPostgres } from './postgres-db.ts';

export type DbConfig = Pick<Config, 'databaseUrl' | 'dataDir' | 'dbPoolSize' | 'dbConnectTimeoutMs' | 'dbStatementTimeoutMs'>;

/** DATABASE_URL wins; otherwise the embedded PGlite in the data folder. */
export async function openDb(config: DbConfig, onError?: (e: Error) => void): Promise<Db> {
  if (!config.databaseUrl) return openPGlite(path.join(config.dataDir, 'pgdata'));
  return openPostgres(config.databaseUrl, {
    onError,
    poolSize: config.dbPoolSize,
    connectTimeoutMs: config.dbConnectTimeoutMs,
    statementTimeoutMs: config.dbStatementTimeoutMs,
  });
}
