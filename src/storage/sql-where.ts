// Optional filters of a list query as one WHERE clause, with numbered parameters (`$n`) pushed as they are used.
// `p(value)` adds a parameter and returns its placeholder; a condition left null or false is not applied.

export function sqlWhere(params: unknown[], build: (p: (value: unknown) => string) => Array<string | null | false>): string {
  const conditions = build((value) => `$${params.push(value)}`).filter((c): c is string => typeof c === 'string');
  return conditions.length ? `WHERE ${conditions.join(' AND ')}` : '';
}

/**
 * Keyset condition for lists ordered newest first by creation time, then uuid (`created_us` is the position's
 * created_at in microseconds since the epoch, exact: a JavaScript Date would drop the microseconds).
 */
export function createdBefore(p: (value: unknown) => string, position: { createdUs: string; id: string } | undefined): string | null {
  if (!position) return null;
  return `(created_at, id) < ('epoch'::timestamptz + ${p(position.createdUs)}::bigint * interval '1 microsecond', ${p(position.id)}::uuid)`;
}

/** The select-list item that gives each row its exact `created_us` position (see createdBefore). */
export const CREATED_US = `(extract(epoch FROM created_at) * 1000000)::bigint::text AS created_us`;

/**
 * Issue 40 item 1: a list's name search, a case-insensitive substring of any of `columns` (a NULL column never
 * matches). strpos, not LIKE: the text is taken literally, so `%`, `_` and `\` match themselves with nothing to escape.
 * No index serves a substring (pg_trgm is not in PGlite); at 20,000 rows the scan is a few milliseconds
 * (decisions.md "Lists at scale (issue 40)").
 */
export function nameContains(p: (value: unknown) => string, columns: readonly string[], text: string | undefined): string | null {
  if (text === undefined) return null;
  // lower() on both sides, in the database: one case folding, the one the names are stored under.
  const needle = p(text);
  return `(${columns.map((c) => `strpos(lower(${c}), lower(${needle})) > 0`).join(' OR ')})`;
}
