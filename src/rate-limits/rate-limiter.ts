// Spec 8.1: fixed one-minute buckets aligned to the minute, counted in the shared store with one atomic statement
// per check. Fails open (and logs) if the store errors. Once a key is over its limit this instance remembers it
// until the minute ends, so a caller hammering past its limit costs the database nothing.
//
// When the store is the database the service writes runs to, a count can also ride on the request's own write
// (guard → RateGuard, rate-guard.ts): the same upsert, as a CTE of that statement, so it costs no round trip or commit.
import type { Queryable } from '../storage/db.ts';
import type { Clock } from '../lib/clock.ts';
import { bucketUpsertSql, RateGuard } from './rate-guard.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket resets (the next minute boundary), at least 1. */
  resetSeconds: number;
}

export interface RateLimiter {
  /** Counts one request now, in a statement of its own. */
  hit(key: string, limit: number): Promise<RateDecision>;
  /**
   * Optional: a count to be made inside the request's write (RateGuard), whose decision the write settles.
   * Returns the decision at once, counting nothing, when this instance already knows the key is over its limit
   * this minute.
   */
  guard?(key: string, limit: number): RateGuard | RateDecision;
}

const WINDOW_MS = 60_000;

/** The fixed one-minute bucket `now` falls in. */
export interface RateWindow {
  start: Date;
  resetSeconds: number;
}

export function windowOf(now: Date): RateWindow {
  const startMs = Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS;
  return { start: new Date(startMs), resetSeconds: Math.max(1, Math.ceil((startMs + WINDOW_MS - now.getTime()) / 1000)) };
}

export interface DbRateLimiterOptions {
  /** The store is the database runs are written to, so counts may ride on those writes (guard). */
  countsRideOnWrites?: boolean;
}

export class DbRateLimiter implements RateLimiter {
  private readonly blocked = new Map<string, number>(); // key -> window start (ms) it is blocked for
  readonly guard?: RateLimiter['guard'];

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly onStoreError: (err: unknown) => void,
    opts: DbRateLimiterOptions = {},
  ) {
    if (opts.countsRideOnWrites) {
      this.guard = (key, limit) => {
        const window = windowOf(this.clock.now());
        return this.blockedNow(key, limit, window) ?? new RateGuard(this, key, limit, window);
      };
    }
  }

  async hit(key: string, limit: number): Promise<RateDecision> {
    const window = windowOf(this.clock.now());
    const blocked = this.blockedNow(key, limit, window);
    if (blocked) return blocked;
    let count: number;
    try {
      const { rows } = await this.db.query<{ count: number }>(bucketUpsertSql('$1', '$2'), [key, window.start]);
      count = rows[0]!.count;
    } catch (err) {
      return this.failedOpen(err, limit, window);
    }
    return this.decide(key, limit, window, count);
  }

  /** The decision for a counted request; remembers a key over its limit until its minute ends. */
  decide(key: string, limit: number, window: RateWindow, count: number): RateDecision {
    const { resetSeconds } = window;
    if (count > limit) {
      if (this.blocked.size > 50_000) this.blocked.clear();
      this.blocked.set(key, window.start.getTime());
      return { allowed: false, limit, remaining: 0, resetSeconds };
    }
    return { allowed: true, limit, remaining: limit - count, resetSeconds };
  }

  /** Spec 8.1: a store error lets the request through (and is reported). */
  failedOpen(err: unknown, limit: number, window: RateWindow): RateDecision {
    this.onStoreError(err);
    return { allowed: true, limit, remaining: limit, resetSeconds: window.resetSeconds };
  }

  private blockedNow(key: string, limit: number, window: RateWindow): RateDecision | null {
    return this.blocked.get(key) === window.start.getTime() ? { allowed: false, limit, remaining: 0, resetSeconds: window.resetSeconds } : null;
  }
}

/** Drops buckets of past minutes (called by the sweeper). */
export async function deleteOldBuckets(q: Queryable, now: Date): Promise<void> {
  await q.query('DELETE FROM rate_limit_buckets WHERE window_start < $1', [new Date(now.getTime() - 2 * WINDOW_MS)]);
}

/** Spec 8.1's table, in one place. */
export const LIMITS = {
  trigger: 20,
  triggerAndWait: 5,
  triggerAndDownload: 5,
  register: 20,
  ingest: 20,
  webhook: 60,
  webhookAndWait: 10,
  callbackAndWaitpoint: 20, // shared bucket
  zoneRuns: 30, // per user
  zoneWaitpoint: 20, // per user + agent
  zoneCredentials: 60, // per user + agent
} as const;
