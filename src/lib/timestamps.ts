// Timestamps a caller or a runtime hands us, on their way to a timestamptz column. PostgreSQL itself holds
// 4713 BC to 294276 AD, but the way there does not: ISO 8601's year 0000 (1 BC) is refused by PostgreSQL's input
// ("date/time field value out of range"), and past 9999 JavaScript writes `+010000-…`, which it cannot read.
// Each was a 500 at write time. So every timestamp is one of years 0001-9999 UTC, after its offset is applied
// (`9999-12-31T23:59:59-01:00` is already year 10000); outside that it is refused (input) or dropped (runtime data).
//
// The text form is ISO 8601's extended date-time with a required offset (RFC 3339; seconds may be left out), read
// field by field: JavaScript's own parser would quietly turn 30 February into 1 March and take a leap second.

/** 0001-01-01T00:00:00.000Z and 9999-12-31T23:59:59.999Z. */
export const MIN_STORABLE_MS = -62_135_596_800_000;
export const MAX_STORABLE_MS = 253_402_300_799_999;

/** What a refusal says, so every timestamp field words it alike. */
export const TIMESTAMP_RULE = 'must be an ISO 8601 date-time with a time zone offset, between 0001-01-01 and 9999-12-31 UTC';

/**
 * How far ahead of our clock a caller's "when it happened" may be (issue 38): a reporter's clock may run a little
 * fast, but a start or end in the future beyond that is a mistake that would skew durations and dashboards.
 */
export const MAX_CLOCK_SKEW_MS = 5 * 60_000;
export const FUTURE_RULE = 'must not be more than 5 minutes in the future (clock skew allowed)';

/** An event's time from a caller: a timestamp as parseTimestamp reads it, at most MAX_CLOCK_SKEW_MS after `now`. */
export function parseEventTimestamp(text: unknown, now: Date): { date: Date } | { problem: string } {
  const date = parseTimestamp(text);
  if (!date) return { problem: TIMESTAMP_RULE };
  if (date.getTime() > now.getTime() + MAX_CLOCK_SKEW_MS) return { problem: FUTURE_RULE };
  return { date };
}

const FORMAT = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2})(?::(\d{2})(\.\d{1,9})?)?(?:([Zz])|([+-])(\d{2}):(\d{2}))$/;

/** The date when it is a valid one that can be stored, else null (an Invalid Date included). */
export function storableDate(date: Date): Date | null {
  const ms = date.getTime();
  return Number.isFinite(ms) && ms >= MIN_STORABLE_MS && ms <= MAX_STORABLE_MS ? date : null;
}

/** A runtime's timestamp (text or epoch ms), or null when it is none or one a timestamptz cannot take. */
export function runtimeDate(v: unknown): Date | null {
  if (typeof v !== 'string' && typeof v !== 'number') return null;
  return storableDate(new Date(v));
}

/** An ISO 8601 / RFC 3339 timestamp with an offset, within years 0001-9999 UTC; null for anything else. */
export function parseTimestamp(text: unknown): Date | null {
  if (typeof text !== 'string' || text.length > 40) return null;
  const m = FORMAT.exec(text);
  if (!m) return null;
  const [year, month, day, hour, minute] = [m[1], m[2], m[3], m[4], m[5]].map(Number) as [number, number, number, number, number];
  const second = m[6] === undefined ? 0 : Number(m[6]);
  if (month < 1 || month > 12 || day < 1 || day > daysIn(year, month) || hour > 23 || minute > 59 || second > 59) return null;
  let offsetMinutes = 0;
  if (!m[8]) {
    const [oh, om] = [Number(m[10]), Number(m[11])];
    if (oh > 23 || om > 59) return null;
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  const millis = m[7] === undefined ? 0 : Math.floor(Number(`0${m[7]}`) * 1000);
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day); // not Date.UTC: it reads years 0-99 as 1900-1999
  date.setUTCHours(hour, minute, second, millis);
  return storableDate(new Date(date.getTime() - offsetMinutes * 60_000));
}

function daysIn(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return [4, 6, 9, 11].includes(month) ? 30 : 31;
}
