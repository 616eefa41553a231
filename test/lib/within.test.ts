// lib/within.ts: the one bounded wait on work that cannot be cancelled (database reads, shutdown steps).
import { describe, expect, it } from 'vitest';
import { settledWithin, TookTooLong, within } from '../../src/lib/within.ts';

const after = <T>(ms: number, v: T, fail = false) => new Promise<T>((resolve, reject) => setTimeout(() => (fail ? reject(new Error('boom')) : resolve(v)), ms));

describe('within', () => {
  it('gives the value in time, the work\'s own failure, or TookTooLong past the limit', async () => {
    await expect(within(after(5, 'v'), 200)).resolves.toBe('v');
    await expect(within(after(5, 'v', true), 200)).rejects.toThrow('boom');
    await expect(within(after(200, 'v'), 10)).rejects.toBeInstanceOf(TookTooLong);
  });
});

describe('settledWithin', () => {
  it('is true when the work settled in time (failed or not), false past the limit; a spent limit is no wait at all', async () => {
    expect(await settledWithin(after(5, 'v'), 200)).toBe(true);
    expect(await settledWithin(after(5, 'v', true), 200)).toBe(true);
    expect(await settledWithin(after(200, 'v'), 10)).toBe(false);
    let done = false;
    expect(await settledWithin(after(200, 'v').then(() => (done = true)), -50)).toBe(false);
    expect(done).toBe(false); // answered before the work, not after it
  });
});
