import { describe, expect, it } from 'vitest';
import { findUnstorable, MAX_JSON_DEPTH } from '../../src/http/no-nul.ts';
import { nested } from '../runtime-api/support.ts';

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

  it(`refuses nesting deeper than ${MAX_JSON_DEPTH} levels without recursing, and keeps the message short`, () => {
    let deep: unknown = 1;
    for (let i = 0; i < 200_000; i++) deep = [deep];
    const found = findUnstorable(deep);
    expect(found?.problem).toMatch(/nests deeper than/);
    expect(found!.path.length).toBeLessThanOrEqual(201);
  });
});
