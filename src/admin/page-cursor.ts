// Pages of the admin lists (admin-api.md "Runs and audit": `limit` and an opaque `cursor`; issue 14: the console's
// lists page the same way). Keyset pagination: a cursor holds the last row's position, never an offset, so a page
// never shifts when rows arrive. A cursor names its list, so a runs cursor handed to /agents is a 400, not a page.
import { errors } from '../errors.ts';

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/**
 * The answer for rows fetched with `limit + 1`: the extra row only tells that another page exists (no count).
 * `position` gives the cursor text of the page's last row.
 */
export function pageOf<R, T>(rows: R[], limit: number, list: string, position: (row: R) => string, view: (row: R) => T): Page<T> {
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(view), next_cursor: rows.length > limit && last ? encodeCursor(list, position(last)) : null };
}

export function encodeCursor(list: string, position: string): string {
  return Buffer.from(`${list}:${position}`, 'utf8').toString('base64url');
}

/** Lists ordered by a numeric id (runs, agents, runtimes): the last id. */
export function decodeIdCursor(list: string, cursor: string): number {
  const m = decode(list, cursor, /^([1-9][0-9]{0,15})$/);
  const id = m ? Number(m[1]) : NaN;
  if (!Number.isSafeInteger(id)) throw notACursor();
  return id;
}

/** A position in a list ordered by creation, then uuid (organizations, users: their ids are random). */
export interface CreatedPosition {
  /** created_at in microseconds since the epoch, as the database reads it back exactly (text, not a Date: µs). */
  createdUs: string;
  id: string;
}

export const createdPosition = (p: CreatedPosition): string => `${p.createdUs}:${p.id}`;

export function decodeCreatedCursor(list: string, cursor: string): CreatedPosition {
  const m = decode(list, cursor, /^(-?[0-9]{1,18}):([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/);
  if (!m) throw notACursor();
  return { createdUs: m[1]!, id: m[2]! };
}

function decode(list: string, cursor: string, position: RegExp): RegExpExecArray | null {
  const text = Buffer.from(cursor, 'base64url').toString('utf8');
  return text.startsWith(`${list}:`) ? position.exec(text.slice(list.length + 1)) : null;
}

const notACursor = () => errors.invalid('querystring.cursor', 'is not a cursor this API handed out for this list');
