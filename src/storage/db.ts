// One SQL dialect (PostgreSQL), two drivers: embedded PGlite by default, a real server via DATABASE_URL.
// Everything above this file sees only these interfaces.
import type { PoolStats } from '../metrics/scrape-gauges.ts';

export interface QueryResult<R> {
  rows: R[];
  rowCount: number;
}

export interface Queryable {
  query<R = Record<string, unknown>>(sql: string, params?: readonly unknown[]): Promise<QueryResult<R>>;
}

/** A connection inside a transaction. */
export interface Tx extends Queryable {
  /** Runs several statements separated by semicolons, without parameters (migrations). */
  exec(sql: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly driver: 'pglite' | 'postgres';
  /** Runs `fn` in one transaction; rolls back if it throws. */
  transaction<T>(fn: (tx: Tx) => Promise<T>): Promise<T>;
  /** Runs several statements separated by semicolons, without parameters (migrations). */
  exec(sql: string): Promise<void>;
  /**
   * Runs one maintenance statement that cannot run inside a transaction (VACUUM), on a connection of its own and
   * without the statement timeout: at scale it outlasts any ceiling a request's statement should have.
   */
  maintain(sql: string): Promise<void>;
  /**
   * LISTEN on a channel; returns a function that stops listening. Notifications sent while the listening
   * connection was down are lost: `onResubscribed` runs after it is back, so callers can catch up.
   */
  listen(channel: string, onMessage: (payload: string) => void, onResubscribed?: () => void): Promise<() => Promise<void>>;
  /** The connection pool's counts (PostgreSQL). PGlite has no pool (one in-process connection) and leaves it out. */
  poolStats?(): PoolStats;
  close(): Promise<void>;
}

/** Postgres int8 (bigint ids, counters, durations) as JS numbers: every value we store stays below 2^53. */
export const INT8_OID = 20;
export const parseInt8 = (value: string): number => Number(value);
