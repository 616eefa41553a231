// Spec 8.1: fixed one-minute buckets aligned to the minute, counted in the shared store with one atomic statement
// per check. Fails open (and logs) if the store errors. Once a key is over its limit this instance remembers it
// until the minute ends, so a caller hammering past its limit costs the database nothing.
import type { Queryable } from '../storage/db.ts';
import type { Clock } from '../lib/clock.ts';

export interface RateDecision {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Seconds until the bucket resets (the next minute boundary), at least 1. */
  resetSeconds: number;
}

export interface RateLimiter {
  hit(key: string, limit: number): Promise<RateDecision>;
}

const WINDOW_MS = 60_000;

export function windowOf(now: Date): { start: Date; resetSeconds: number } {
  const startMs = Math.floor(now.getTime() / WINDOW_MS) * WINDOW_MS;
  return { start: new Date(startMs), resetSeconds: Math.max(1, Math.ceil((startMs + WINDOW_MS - now.getTime()) / 1000)) };
}

export class DbRateLimiter implements RateLimiter {
  private readonly blocked = new Map<string, number>(); // key -> window start (ms) it is blocked for

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly onStoreError: (err: unknown) => void,
  ) {}

  async hit(key: string, limit: number): Promise<RateDecision> {
    const { start, resetSeconds } = windowOf(this.clock.now());
    if (this.blocked.get(key) === start.getTime()) return { allowed: false, limit, remaining: 0, resetSeconds };
    let count: number;
    try {
      const { rows } = await this.db.query<{ count: number }>(
        `INSERT INTO rate_limit_buckets (key, window_start, count) VALUES ($1, $2, 1)
         ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_buckets.count + 1
         RETURNING count`,
        [key, start],
      );
      count = rows[0]!.count;
    } catch (err) {
      this.onStoreError(err);
      return { allowed: true, limit, remaining: limit, resetSeconds };
    }
    if (count > limit) {
      if (this.blocked.size > 50_000) this.blocked.clear();
      this.blocked.set(key, start.getTime());
      return { allowed: false, limit, remaining: 0, resetSeconds };
    }
    return { allowed: true, limit, remaining: limit - count, resetSeconds };
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
