import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findUnstorable, MAX_JSON_DEPTH, nestsTooDeep, storableJson, storableValue, stripNul } from '../../src/lib/storable-json.ts';
import { createTestDb, type TestDb } from '../helpers/test-db.ts';
import { nested } from '../runtime-api/support.ts';

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

const roundTrip = async (value: unknown) => (await t.db.query<{ v: unknown }>('SELECT $1::jsonb AS v', [storableJson(value)])).rows[0]!.v;

describe('storableJson: runtime output that jsonb would refuse is stored, not lost', () => {
  it('a NUL in a value or key becomes the visible text \\u0000', async () => {
    expect(await roundTrip({ 'k\u0000': 'a\u0000b', list: ['\u0000'] })).toEqual({ 'k\\u0000': 'a\\u0000b', list: ['\\u0000'] });
  });

  it('a lone surrogate becomes U+FFFD; a real pair and escaped backslashes are untouched', async () => {
    expect(await roundTrip({ lone: 'x\ud800y', low: '\udc00', pair: '😀', text: '\\u0000 and \\ud800 as text' })).toEqual({
      lone: 'x\ufffdy',
      low: '\ufffd',
      pair: '😀',
      text: '\\u0000 and \\ud800 as text',
    });
  });

  it('leaves ordinary JSON byte-identical to JSON.stringify', () => {
    const value = { a: 1, b: [true, null, 'é \n \t "q"'], c: { d: '\u0001' } };
    expect(storableJson(value)).toBe(JSON.stringify(value));
  });

  it('storableValue is exactly what reads back, so a runtime answer compares equal to the stored copy', async () => {
    const value = { s: 'a\u0000b', lone: '\ud800', n: 1 };
    expect(storableValue(value)).toEqual(await roundTrip(value));
    expect(storableValue(undefined)).toBeNull();
  });
});

describe('findUnstorable (decisions.md "Errors": bad input is a 4xx naming the field, never a 5xx)', () => {
  it('finds nothing in storable values, however large or odd', () => {
    for (const v of [null, 1, 'text', 'é😀', [], {}, { constructor: 'x', list: [1, 'two', { three: null }] }, nested(MAX_JSON_DEPTH - 1)]) {
      expect(findUnstorable(v)).toBeNull();
    }
  });

  it('names the first string holding a NUL, in document order, with array indexes', () => {
    expect(findUnstorable({ a: 'ok', b: ['x', 'y\u0000'], c: '\u0000' })).toEqual({
      path: 'body.b.1',
      problem: 'contains a NUL character (\\u0000), which cannot be stored',
    });
    expect(findUnstorable('\u0000', 'body')).toMatchObject({ path: 'body' });
  });

  it('checks object keys, and prints them without raw control characters', () => {
    const found = findUnstorable({ input: { ['a\u0000b']: 1 } });
    expect(found).toEqual({ path: 'body.input.a\\u0000b', problem: expect.stringMatching(/^has a key that contains a NUL/) });
  });

  it('finds unpaired surrogates (jsonb refuses them) but accepts proper pairs', () => {
    expect(findUnstorable({ s: 'a\ud800' })?.problem).toMatch(/unpaired UTF-16 surrogate/);
    expect(findUnstorable({ s: '\udc00a' })?.problem).toMatch(/unpaired/);
    expect(findUnstorable({ s: '\ud83d\ude00' })).toBeNull();
  });

  it('refuses a number beyond the double range (JSON.parse reads 1e400 as Infinity; stored it would be null), not 2^64', () => {
    expect(findUnstorable(JSON.parse('{"input":{"n":[1, 1e400]}}'))).toEqual({ path: 'body.input.n.1', problem: expect.stringMatching(/number too large/) });
    expect(findUnstorable(JSON.parse('{"n":-1e400}'))?.path).toBe('body.n');
    expect(findUnstorable(JSON.parse('{"n":18446744073709551616,"m":1e308,"tiny":1e-400}'))).toBeNull();
  });

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels without recursing, and keeps the message short`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const found = findUnstorable(deep);
    expect(found?.problem).toMatch(/nests deeper than/);
    expect(found!.path.length).toBeLessThanOrEqual(201);
  });
});

describe('nestsTooDeep: the same MAX_JSON_DEPTH, for values that are dropped rather than refused', () => {
  it('spec 8.4: agrees with findUnstorable on where too deep starts, and does not recurse', () => {
    expect(nestsTooDeep(nested(MAX_JSON_DEPTH))).toBe(false);
    expect(findUnstorable(nested(MAX_JSON_DEPTH))).toBeNull();
    expect(nestsTooDeep(nested(MAX_JSON_DEPTH + 1))).toBe(true);
    expect(findUnstorable(nested(MAX_JSON_DEPTH + 1))?.problem).toMatch(/nests deeper than/);
    expect(nestsTooDeep(nested(200_000))).toBe(true);
    expect(nestsTooDeep({ s: 'a\u0000b', lone: '\ud800' })).toBe(false);
  });
});

describe('stripNul: NUL made visible in stored webhook snapshots (spec 4.6), copy-on-write', () => {
  it('spec 2.2: returns the same value, without copying, when there is no NUL', () => {
    const value = { a: [1, 'x', { b: null, c: true }], d: 'text' };
    expect(stripNul(value)).toBe(value);
    expect(stripNul('plain')).toBe('plain');
    expect(stripNul(null)).toBeNull();
    expect(stripNul(7)).toBe(7);
  });

  it('spec 2.2: copies only the changed paths and never mutates its input', () => {
    const untouched = { big: [1, 2, 3] };
    const value = { untouched, list: ['ok', 'n\u0000ul'], nested: { s: '\u0000\u0000' } };
    const result = stripNul(value);
    expect(result).not.toBe(value);
    expect(result.untouched).toBe(untouched);
    expect(result).toEqual({ untouched: { big: [1, 2, 3] }, list: ['ok', 'n\\u0000ul'], nested: { s: '\\u0000\\u0000' } });
    expect(value.list[1]).toBe('n\u0000ul');
    expect(Object.keys(result)).toEqual(['untouched', 'list', 'nested']);
  });

  it('spec 2.2: keys are cleaned too, and __proto__ keys stay own data properties', () => {
    const value = JSON.parse('{"__proto__":{"x":"\\u0000"},"k\\u0000":1}') as Record<string, unknown>;
    const result = stripNul(value);
    expect(Object.keys(result)).toEqual(['__proto__', 'k\\u0000']);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
    expect(JSON.stringify(result)).toBe('{"__proto__":{"x":"\\\\u0000"},"k\\\\u0000":1}');
    const nullProto = Object.assign(Object.create(null) as Record<string, string>, { a: '\u0000' });
    expect(Object.getPrototypeOf(stripNul(nullProto))).toBeNull();
  });

  it('spec 2.2: leaves non-plain objects alone', () => {
    const date = new Date();
    const buffer = Buffer.from([0]);
    expect(stripNul({ date, buffer }).date).toBe(date);
    expect(stripNul(buffer)).toBe(buffer);
  });
});
