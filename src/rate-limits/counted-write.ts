// A rate-limit count that rides on a request's own write (decisions.md "Rate limits"): the bucket upsert runs as a
// CTE of the write's statement and the write applies only within the limit, so counting costs neither a round
// trip nor a commit of its own, and a request over the limit writes nothing. The storage functions that take one
// (insertRun, transition, recordIntermediateOutput) settle it with the count their statement returned.

export interface CountedWrite {
  /**
   * A CTE named `rate_count` (one row, column `count`: this request's count in its bucket) and the condition the
   * write adds to its WHERE so that it applies only within the limit. Parameters are appended through `p`.
   */
  sql(p: (value: unknown) => string): { cte: string; withinLimit: string };
  /** The count the statement returned. Throws the 429 when it is over the limit (the write did not apply). */
  settle(count: number): void;
  /** The combined statement failed where the plain write succeeded: the count's store is at fault (fail open). */
  failedOpen(err: unknown): void;
}

/**
 * Runs the write with its count; if the server refuses that statement, runs the plain write and, when that
 * works, reports the count's failure (spec 8.1: the limiter fails open). Any other error is the write's own.
 * Only an error the server answered is retried: the refused statement changed nothing, so the retry cannot
 * write twice (a lost connection might have committed).
 */
export async function countedOrPlain<T>(
  counted: CountedWrite,
  combined: () => Promise<{ result: T; count: number }>,
  plain: () => Promise<T>,
): Promise<T> {
  let outcome: { result: T; count: number };
  try {
    outcome = await combined();
  } catch (err) {
    if (!isServerError(err)) throw err;
    const result = await plain();
    counted.failedOpen(err);
    return result;
  }
  counted.settle(outcome.count);
  return outcome.result;
}

/** A statement the server refused (it carries a SQLSTATE), as opposed to a lost or broken connection. */
function isServerError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code);
}

/** The extra column a counted statement returns next to the row, removed before the row is used. */
export const COUNT_COLUMN = 'rate_count';
