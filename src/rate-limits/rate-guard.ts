// A request's rate-limit count made by the request's own write (decisions.md "Rate limits"): the bucket upsert runs
// as a CTE of the write's statement and the write applies only within the limit, so counting costs neither a round
// trip nor a commit of its own, and a request over the limit writes nothing.
//
// Routes hand services one opaque RateGuard (or null); services hand it to the repository function that writes;
// that function builds its statement and lets `writeGuarded` add the count. An over-limit request comes back as the
// value `OverLimit`, which services return and routes answer with 429 — nothing is thrown from storage.
import type { Queryable } from '../storage/db.ts';
import type { DbRateLimiter, RateDecision, RateWindow } from './rate-limiter.ts';

/** The one bucket upsert, as a statement of its own or as a CTE of a write; returns the request's count. */
export const bucketUpsertSql = (key: string, windowStart: string): string =>
  `INSERT INTO rate_limit_buckets (key, window_start, count) VALUES (${key}, ${windowStart}, 1)
   ON CONFLICT (key, window_start) DO UPDATE SET count = rate_limit_buckets.count + 1
   RETURNING count`;

/** RateGuard.sql's text, given the placeholders of its three values (RateGuard.values). */
function countSql(key: string, start: string, limit: string): { cte: string; withinLimit: string } {
  return { cte: `rate_count AS (${bucketUpsertSql(key, `${start}::timestamptz`)})`, withinLimit: `(SELECT count FROM rate_count) <= ${limit}` };
}

/** The write did not apply: the request is over its limit (spec 8.1: 429 with Retry-After). */
export interface OverLimit {
  kind: 'over_limit';
  retryAfterSeconds: number;
}

export function isOverLimit(value: unknown): value is OverLimit {
  return (value as { kind?: unknown } | null)?.kind === 'over_limit';
}

/**
 * One request's count, made by its write. The write settles it; the decision is then a value the HTTP edge reads
 * (the RateLimit-* headers, the 429): nothing here knows about the request or its answer.
 */
export class RateGuard {
  settled = false;
  /** Known once the write has counted the request (or failed open); null while it has not, and after `waive`. */
  decision: RateDecision | null = null;

  constructor(
    private readonly limiter: Pick<DbRateLimiter, 'decide' | 'failedOpen'>,
    readonly key: string,
    readonly limit: number,
    private readonly window: RateWindow,
  ) {}

  /** The CTE `rate_count` (one row, column `count`) and the condition a write adds to its WHERE. */
  sql(p: (value: unknown) => string): { cte: string; withinLimit: string } {
    const [key, start, limit] = this.values().map(p) as [string, string, string];
    return countSql(key, start, limit);
  }

  /** The parameters `sql` adds, in its order (a statement text kept from an earlier request needs only these). */
  values(): [string, Date, number] {
    return [this.key, this.window.start, this.limit];
  }

  settle(count: number): RateDecision {
    this.settled = true;
    this.decision = this.limiter.decide(this.key, this.limit, this.window, count);
    return this.decision;
  }

  /**
   * The request wrote nothing and is not counted: an idempotent replay, which starts nothing at the runtime
   * (decisions.md "Idempotency keys"). It gets no RateLimit-* headers.
   */
  waive(): void {
    this.settled = true;
  }

  failedOpen(err: unknown): void {
    this.settled = true;
    this.decision = this.limiter.failedOpen(err, this.limit, this.window);
  }
}

/** A write statement in parts, so that a guard can be added to it. */
export interface GuardableWrite {
  /** The write's own parameters; a guard appends its own after them. */
  params: unknown[];
  /**
   * The statement's CTEs, given the guard's condition to AND into the WHERE of its write (null: no guard). The CTE
   * named `from` returns the written row.
   */
  ctes(withinLimit: string | null): string;
  from: string;
  /** The final select list, e.g. `moved.*, … AS notified`. */
  select: string;
}

/**
 * A write whose text depends on none of its values, with both its texts (without and with a guard) built once, at
 * module load, by `fixedWrite`: rather than rebuilt, and hashed again to find its prepared statement, on every
 * request (a few µs a request on the hot writes; bench profile, issue 15).
 */
export interface FixedWrite {
  paramCount: number;
  plain: string;
  guarded: string;
}

/** Both texts of a write taking `paramCount` parameters of its own (the guard's follow, as RateGuard.values). */
export function fixedWrite(paramCount: number, write: Omit<GuardableWrite, 'params'>): FixedWrite {
  const w = { ...write, params: [] };
  return { paramCount, plain: plainText(w), guarded: guardedText(w, countSql(`$${paramCount + 1}`, `$${paramCount + 2}`, `$${paramCount + 3}`)) };
}

function guardedText(write: GuardableWrite, count: { cte: string; withinLimit: string }): string {
  return `WITH ${count.cte}, ${write.ctes(count.withinLimit)}
       SELECT ${write.select}, rate_count.count AS ${COUNT_COLUMN} FROM rate_count LEFT JOIN ${write.from} ON true`;
}

function plainText(write: GuardableWrite): string {
  return `WITH ${write.ctes(null)} SELECT ${write.select} FROM ${write.from}`;
}

/** The extra column a guarded statement returns next to the row, removed before the row is handed back. */
const COUNT_COLUMN = 'rate_count';

/**
 * Runs the write, with the guard's count when there is one. Returns the written row, null when the write's own
 * condition refused it, or OverLimit (nothing written). Spec 8.1 "fails open": if the server refuses the combined
 * statement, the plain write runs and the count's failure is reported; only an error the server answered is retried
 * that way (the refused statement changed nothing, so the retry cannot write twice; a lost connection might have).
 */
export async function writeGuarded<R>(
  q: Queryable,
  guard: RateGuard | null,
  write: GuardableWrite | { params: unknown[]; fixed: FixedWrite },
): Promise<R | null | OverLimit> {
  const fixed = 'fixed' in write ? write.fixed : null;
  if (fixed && fixed.paramCount !== write.params.length) throw new Error(`a fixed write takes ${fixed.paramCount} parameters, not ${write.params.length}`);
  if (!guard) return plainWrite<R>(q, write);
  let params: unknown[];
  let text: string;
  if (fixed) {
    params = [...write.params, ...guard.values()];
    text = fixed.guarded;
  } else {
    write = write as GuardableWrite;
    params = [...write.params];
    text = guardedText(write, guard.sql((v) => `$${params.push(v)}`));
  }
  let row: (R & { [COUNT_COLUMN]?: number; id?: unknown }) | null;
  try {
    row = await firstRow(q, text, params);
  } catch (err) {
    if (!isServerError(err)) throw err;
    const result = await plainWrite<R>(q, write);
    guard.failedOpen(err);
    return result;
  }
  const decision = guard.settle(row![COUNT_COLUMN]!);
  if (!decision.allowed) return { kind: 'over_limit', retryAfterSeconds: decision.resetSeconds };
  if (row!.id === null) return null;
  delete row![COUNT_COLUMN];
  return row;
}

/** The write without a guard. A function of its own, not a closure: writeGuarded is on every hot write. */
function plainWrite<R>(q: Queryable, write: GuardableWrite | { params: unknown[]; fixed: FixedWrite }): Promise<R | null> {
  return firstRow<R>(q, 'fixed' in write ? write.fixed.plain : plainText(write), write.params);
}

async function firstRow<R>(q: Queryable, sql: string, params: unknown[]): Promise<R | null> {
  return (await q.query<R>(sql, params)).rows[0] ?? null;
}

/** A statement the server refused (it carries a SQLSTATE), as opposed to a lost or broken connection. */
function isServerError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}
