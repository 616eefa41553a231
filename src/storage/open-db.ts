import path from 'node:path';
import type { Config } from '../config.ts';
import { StartupError } from '../lib/startup-error.ts';
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

/** Backoff between start attempts: 0.5 s doubling, at most this. */
const MAX_RETRY_DELAY_MS = 5_000;

/**
 * openDb() for the service's start (decisions.md "Startup that explains itself"). A database that cannot be reached
 * yet (refused, unresolvable, timed out, starting up, out of connections) is retried with backoff, one line per
 * attempt through `say`, until `dbStartupTimeoutMs`; then one StartupError (exit 1: waiting longer may be enough).
 * One that answers but refuses the credentials or has no such database is a StartupError at once (exit 2: the
 * setting is wrong). Messages name the host, port and database, never the password.
 */
export async function openDbAtStart(
  config: DbConfig & Pick<Config, 'dbStartupTimeoutMs'>,
  say: (line: string) => void,
  onError?: (e: Error) => void,
  sleep: (ms: number) => Promise<void> = (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
): Promise<Db> {
  if (!config.databaseUrl) return openDb(config, onError);
  const where = describeUrl(config.databaseUrl);
  const started = Date.now();
  const deadline = started + config.dbStartupTimeoutMs;
  for (let attempt = 1, delay = 500; ; attempt++, delay = Math.min(delay * 2, MAX_RETRY_DELAY_MS)) {
    try {
      return await openDb(config, onError);
    } catch (err) {
      const reason = reasonOf(err);
      const code = (err as { code?: unknown }).code;
      if (typeof code === 'string' && (code.startsWith('28') || code === '3D000')) {
        throw new StartupError(`DATABASE_URL (${where}) refused the service: ${reason}`, 2);
      }
      const left = deadline - Date.now();
      if (left <= 0) {
        const waited = Math.round((Date.now() - started) / 1000);
        throw new StartupError(
          `DATABASE_URL (${where}) could not be reached in ${waited} s (${attempt} attempts; ARS_DB_STARTUP_TIMEOUT_MS=${config.dbStartupTimeoutMs}): ${reason}`,
          1,
        );
      }
      const wait = Math.min(delay, left);
      say(`database ${where} not reachable yet (${reason}); attempt ${attempt}, retrying in ${(wait / 1000).toFixed(1)} s`);
      await sleep(wait);
    }
  }
}

/** host:port/database of a postgres:// URL, without user or password. */
export function describeUrl(url: string): string {
  try {
    const u = new URL(url);
    return `${u.hostname || 'localhost'}:${u.port || '5432'}${u.pathname && u.pathname !== '/' ? u.pathname : ''}`;
  } catch {
    return 'an unparsable URL';
  }
}

function reasonOf(err: unknown): string {
  const e = err as { code?: unknown; message?: unknown; errors?: unknown[] };
  // Node's "connect ECONNREFUSED" for a host with several addresses is an AggregateError with an empty message.
  const first = Array.isArray(e.errors) && e.errors.length > 0 ? (e.errors[0] as { code?: unknown; message?: unknown }) : null;
  const message = String(e.message || first?.message || err);
  const code = typeof e.code === 'string' ? e.code : typeof first?.code === 'string' ? first.code : null;
  return code && !message.includes(code) ? `${code}: ${message}` : message;
}
