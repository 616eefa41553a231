// lib/timestamps.ts: the one parser for timestamps callers send, and the one range (years 0001-9999 UTC) every
// timestamp stored in a timestamptz keeps to (decisions.md "Errors and logs").
import { describe, expect, it } from 'vitest';
import { MAX_STORABLE_MS, MIN_STORABLE_MS, parseTimestamp, runtimeDate, storableDate } from '../../src/lib/timestamps.ts';

describe('parseTimestamp', () => {
  it('reads ISO 8601 / RFC 3339 with an offset, seconds and fractions optional, T and Z in either case', () => {
    expect(parseTimestamp('2024-05-01T12:30:45Z')?.toISOString()).toBe('2024-05-01T12:30:45.000Z');
    expect(parseTimestamp('2024-05-01t12:30:45.123456789z')?.toISOString()).toBe('2024-05-01T12:30:45.123Z');
    expect(parseTimestamp('2024-05-01T12:30+02:00')?.toISOString()).toBe('2024-05-01T10:30:00.000Z');
    expect(parseTimestamp('2024-02-29T00:00:00-05:30')?.toISOString()).toBe('2024-02-29T05:30:00.000Z');
    expect(parseTimestamp('0050-06-01T00:00:00Z')?.toISOString()).toBe('0050-06-01T00:00:00.000Z'); // not 1950
  });

  it('keeps to years 0001-9999 UTC once the offset is applied', () => {
    expect(parseTimestamp('0001-01-01T00:00:00Z')?.getTime()).toBe(MIN_STORABLE_MS);
    expect(parseTimestamp('9999-12-31T23:59:59.999Z')?.getTime()).toBe(MAX_STORABLE_MS);
    for (const text of ['0000-01-01T00:00:00Z', '0001-01-01T00:00:00+01:00', '9999-12-31T23:59:59-01:00', '+275760-09-13T00:00:00Z', '99999-01-01T00:00:00Z']) {
      expect(parseTimestamp(text), text).toBeNull();
    }
  });

  it('refuses what is no real date or time rather than rolling it over, and anything without an offset', () => {
    for (const text of [
      '2023-02-29T00:00:00Z', '2024-02-30T00:00:00Z', '2024-04-31T00:00:00Z', '2024-13-01T00:00:00Z', '2024-00-10T00:00:00Z',
      '2024-01-01T24:00:00Z', '2024-01-01T23:60:00Z', '2024-01-01T23:59:60Z', '2024-01-01T00:00:00+24:00',
      '2024-01-01T00:00:00', '2024-01-01', '1714560000', '', ' 2024-01-01T00:00:00Z', `2024-01-01T00:00:00.${'1'.repeat(40)}Z`,
    ]) {
      expect(parseTimestamp(text), text).toBeNull();
    }
    expect(parseTimestamp(1714560000)).toBeNull();
    expect(parseTimestamp(null)).toBeNull();
  });
});

describe('runtimeDate', () => {
  it('reads a runtime\'s text or epoch-ms timestamp; null for none, garbage or one a timestamptz cannot take', () => {
    expect(runtimeDate('2026-03-01T10:00:00.000Z')?.toISOString()).toBe('2026-03-01T10:00:00.000Z');
    expect(runtimeDate(Date.UTC(2026, 2, 1))?.toISOString()).toBe('2026-03-01T00:00:00.000Z');
    for (const v of [null, undefined, {}, 'soon', '0000-01-01T00:00:00Z', 8.64e15]) expect(runtimeDate(v), String(v)).toBeNull();
  });
});

describe('storableDate', () => {
  it('is the date within range, null for an Invalid Date or one outside years 0001-9999', () => {
    const d = new Date('2024-01-01T00:00:00Z');
    expect(storableDate(d)).toBe(d);
    expect(storableDate(new Date(NaN))).toBeNull();
    expect(storableDate(new Date(MIN_STORABLE_MS - 1))).toBeNull();
    expect(storableDate(new Date(MAX_STORABLE_MS + 1))).toBeNull();
    expect(storableDate(new Date(8.64e15))).toBeNull();
  });
});
