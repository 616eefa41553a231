import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { storableJson, storableValue } from '../../src/lib/storable-json.ts';
import { createTestDb, type TestDb } from '../helpers/test-db.ts';

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
