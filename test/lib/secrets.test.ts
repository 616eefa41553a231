// decisions.md "Storage and secrets": master keys by id, rotation, ciphertexts bound to their table, column and
// row, and the v1 format of before key ids still opening (issue 12, finding 8).
import { hash, randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { SealedSecretError, SecretBox, singleKeyring, type MasterKey, type SealedAt } from '../../src/lib/secrets.ts';
import { sealV1 } from '../helpers/sealed-v1.ts';

const A: MasterKey = { id: 'a', key: randomBytes(32) };
const B: MasterKey = { id: 'b', key: randomBytes(32) };
const here: SealedAt = { table: 'agents', column: 'zone_secret_enc', row: 7 };
const SECRET = 'ars_zone_S3CRET-value';

function failure(fn: () => unknown): SealedSecretError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(SealedSecretError);
    return err as SealedSecretError;
  }
  throw new Error('expected the value not to open');
}

describe('SecretBox: master keys by id', () => {
  it('seals v2 under the current key id with base64url parts; every configured key opens its own values', () => {
    const sealed = new SecretBox({ current: 'a', keys: [A] }).seal(SECRET, here);
    expect(sealed).toMatch(/^v2:a:[A-Za-z0-9_-]{16}:[A-Za-z0-9_-]{22}:[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(SECRET);
    expect(new SecretBox({ current: 'a', keys: [A, B] }).open(sealed, here)).toBe(SECRET);
    expect(new SecretBox({ current: 'b', keys: [B, A] }).open(sealed, here)).toBe(SECRET);
  });

  it('rotation: with B current, values sealed under A still open, new ones are sealed under B and open with B alone', () => {
    const old = new SecretBox({ current: 'a', keys: [A] }).seal(SECRET, here);
    const rotated = new SecretBox({ current: 'b', keys: [A, B] });
    expect(rotated.open(old, here)).toBe(SECRET);
    expect(rotated.isCurrent(old)).toBe(false);
    const fresh = rotated.seal(SECRET, here);
    expect(fresh.startsWith('v2:b:')).toBe(true);
    expect(rotated.isCurrent(fresh)).toBe(true);
    expect(new SecretBox({ current: 'b', keys: [B] }).open(fresh, here)).toBe(SECRET);
  });

  it('JSON values round-trip the same way', () => {
    const box = new SecretBox({ current: 'a', keys: [A] });
    const at: SealedAt = { table: 'connections', column: 'secret_enc', row: '0b6e0c8e-55d4-4c1e-9a52-8f3f1b8f5d10' };
    expect(box.openJson(box.sealJson({ value: 'sk_live_x' }, at), at)).toEqual({ value: 'sk_live_x' });
  });
});

describe('SecretBox: a value is bound to its table, column and row', () => {
  const box = new SecretBox({ current: 'a', keys: [A] });
  const sealed = box.seal(SECRET, here);

  it.each([
    ['another row', { ...here, row: 8 }],
    ['another column', { ...here, column: 'credentials_secret_enc' }],
    ['another table', { ...here, table: 'runtimes' }],
  ])('does not open in %s', (_what, elsewhere) => {
    const err = failure(() => box.open(sealed, elsewhere));
    expect(err.message).toContain(`${elsewhere.table}.${elsewhere.column} of row ${elsewhere.row}`);
    expect(err.message).not.toContain(SECRET);
  });

  it('an altered ciphertext or a shortened tag does not open', () => {
    const [v, kid, iv, tag, ct] = sealed.split(':') as [string, string, string, string, string];
    const flipped = Buffer.from(ct, 'base64url');
    flipped[0]! ^= 1;
    failure(() => box.open([v, kid, iv, tag, flipped.toString('base64url')].join(':'), here));
    failure(() => box.open([v, kid, iv, tag.slice(0, 6), ct].join(':'), here));
    failure(() => box.open('not sealed at all', here));
  });
});

describe('SecretBox: the v1 format of before key ids', () => {
  it('opens under the configured key that sealed it (found by fingerprint), whatever its id and place; it is never current', () => {
    const legacy = sealV1(A.key, SECRET);
    expect(new SecretBox(singleKeyring(A.key)).open(legacy, here)).toBe(SECRET);
    const rotated = new SecretBox({ current: 'b', keys: [B, A] });
    expect(rotated.open(legacy, { table: 'runtimes', column: 'api_key_enc', row: 1 })).toBe(SECRET);
    expect(rotated.isCurrent(legacy)).toBe(false);
  });
});

describe('SecretBox: an unknown key id', () => {
  it('fails naming the key id, the place and the configured ids, never a key or the value', () => {
    const sealed = new SecretBox({ current: 'a', keys: [A] }).seal(SECRET, here);
    const err = failure(() => new SecretBox({ current: 'b', keys: [B] }).open(sealed, here));
    expect(err.message).toBe('agents.zone_secret_enc of row 7 was sealed under master key "a", which is not configured (configured: b)');
    const legacy = failure(() => new SecretBox({ current: 'b', keys: [B] }).open(sealV1(A.key, SECRET), here));
    expect(legacy.message).toContain(`fingerprint ${hash('sha256', A.key, 'hex').slice(0, 8)} (v1)`);
    for (const e of [err, legacy]) {
      for (const key of [A.key, B.key]) {
        expect(e.message).not.toContain(key.toString('base64'));
        expect(e.message).not.toContain(key.toString('hex'));
      }
    }
  });

  it('a keyring is refused when its sealing key is missing, an id is malformed or repeated, or a key is not 32 bytes', () => {
    expect(() => new SecretBox({ current: 'c', keys: [A, B] })).toThrow(/"c" is not among/);
    expect(() => new SecretBox({ current: 'a:b', keys: [{ id: 'a:b', key: A.key }] })).toThrow(/must be 1 to 32/);
    expect(() => new SecretBox({ current: 'a', keys: [A, { id: 'a', key: B.key }] })).toThrow(/twice/);
    expect(() => new SecretBox({ current: 'a', keys: [{ id: 'a', key: randomBytes(16) }] })).toThrow(/32 bytes/);
  });
});
