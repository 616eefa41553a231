import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt, decodeProtectedHeader, type JWTPayload } from 'jose';
import { describe, expect, it } from 'vitest';
import {
  mintCredentialsToken,
  mintZoneToken,
  peekAgentId,
  verifyCredentialsToken,
  verifyZoneToken,
} from '../../src/lib/jwt.ts';

const secret = randomBytes(32);
const otherSecret = randomBytes(32);
const now = new Date('2025-03-01T12:00:00.000Z');
const nowSeconds = Math.floor(now.getTime() / 1000);
const later = (seconds: number) => new Date(now.getTime() + seconds * 1000);
const USER = '7d2f3c1a-0b1e-4c57-9a8e-2f7d5b1c9e00';
const ORG = '0c9a4b7e-2d6f-4e1a-8b3c-5a7d9e1f2b40';

const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** Signs arbitrary claims with the real secret, to prove claim checks don't rely on the signature alone. */
async function signRaw(claims: JWTPayload, opts: { alg?: string; key?: Uint8Array; typ?: string } = {}) {
  return new SignJWT(claims)
    .setProtectedHeader({ alg: opts.alg ?? 'HS256', typ: opts.typ ?? 'JWT' })
    .sign(opts.key ?? secret);
}

const credentialsClaims = (overrides: JWTPayload = {}): JWTPayload => ({
  iss: 'ars',
  aud: 'ars-credentials',
  sub: 'run:42',
  agent_id: 7,
  run_id: 42,
  iat: nowSeconds,
  exp: nowSeconds + 3600,
  ...overrides,
});

async function credentials() {
  return mintCredentialsToken({ secret, agentId: 7, runId: 42, now });
}

describe('credentials token', () => {
  it('spec 4.4/8.5: minted HS256 with the documented claims and a 60 minute lifetime', async () => {
    const { token, expiresInSeconds } = await credentials();
    expect(expiresInSeconds).toBe(3600);
    expect(decodeProtectedHeader(token)).toEqual({ alg: 'HS256', typ: 'JWT' });
    expect(decodeJwt(token)).toEqual({
      iss: 'ars',
      aud: 'ars-credentials',
      sub: 'run:42',
      agent_id: 7,
      run_id: 42,
      iat: nowSeconds,
      exp: nowSeconds + 3600,
    });
  });

  it('spec 4.10: a valid token verifies to its agent and run', async () => {
    const { token } = await credentials();
    expect(await verifyCredentialsToken(token, secret, now)).toEqual({ ok: true, agentId: 7, runId: 42 });
    expect(await verifyCredentialsToken(token, secret, later(3599))).toEqual({ ok: true, agentId: 7, runId: 42 });
  });

  it('spec 4.10: an expired token is refused as expired (exp is exclusive)', async () => {
    const { token } = await credentials();
    expect(await verifyCredentialsToken(token, secret, later(3600))).toEqual({ ok: false, reason: 'expired' });
    expect(await verifyCredentialsToken(token, secret, later(86_400))).toEqual({ ok: false, reason: 'expired' });
  });

  it('spec 4.10: a custom ttl is honoured', async () => {
    const { token, expiresInSeconds } = await mintCredentialsToken({ secret, agentId: 7, runId: 42, now, ttlSeconds: 60 });
    expect(expiresInSeconds).toBe(60);
    expect((await verifyCredentialsToken(token, secret, later(59))).ok).toBe(true);
    expect(await verifyCredentialsToken(token, secret, later(60))).toEqual({ ok: false, reason: 'expired' });
  });

  it('spec 4.10: a token signed with another secret is invalid', async () => {
    const { token } = await credentials();
    expect(await verifyCredentialsToken(token, otherSecret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: an expired token under a wrong secret is invalid, not expired', async () => {
    const { token } = await credentials();
    expect(await verifyCredentialsToken(token, otherSecret, later(7200))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: an alg "none" token is refused', async () => {
    const none = `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url(credentialsClaims())}.`;
    expect(await verifyCredentialsToken(none, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    const noneWithSig = `${b64url({ alg: 'none' })}.${b64url(credentialsClaims())}.AAAA`;
    expect(await verifyCredentialsToken(noneWithSig, secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: the algorithm is pinned to HS256 (HS512 with the right secret is refused)', async () => {
    const hs512 = await signRaw(credentialsClaims(), { alg: 'HS512' });
    expect(await verifyCredentialsToken(hs512, secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: a tampered payload is refused', async () => {
    const { token } = await credentials();
    const [header, , signature] = token.split('.');
    const forged = `${header}.${b64url(credentialsClaims({ agent_id: 8 }))}.${signature}`;
    expect(await verifyCredentialsToken(forged, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    const extended = `${header}.${b64url(credentialsClaims({ exp: nowSeconds + 10 * 3600 }))}.${signature}`;
    expect(await verifyCredentialsToken(extended, secret, later(7200))).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: a tampered signature is refused', async () => {
    const { token } = await credentials();
    // Flip the signature's FIRST character: all six of its bits are signature bits. (The last character of a
    // 32-byte signature carries padding bits, so changing it can decode to the same bytes and prove nothing.)
    const cut = token.lastIndexOf('.') + 1;
    const first = token[cut] === 'A' ? 'B' : 'A';
    for (const tampered of [token.slice(0, cut) + first + token.slice(cut + 1), token.slice(0, cut)]) {
      expect(await verifyCredentialsToken(tampered, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    }
  });

  it('spec 4.10: a token without exp is refused', async () => {
    const { exp: _exp, ...claims } = credentialsClaims();
    expect(await verifyCredentialsToken(await signRaw(claims), secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: a token without iat is refused', async () => {
    const { iat: _iat, ...claims } = credentialsClaims();
    expect(await verifyCredentialsToken(await signRaw(claims), secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: wrong issuer, wrong typ and inconsistent claims are refused even when correctly signed', async () => {
    const cases: JWTPayload[] = [
      credentialsClaims({ iss: 'someone-else' }),
      credentialsClaims({ aud: 'ars-zone' }),
      credentialsClaims({ sub: 'run:43' }),
      credentialsClaims({ agent_id: '7' }),
      credentialsClaims({ run_id: 0, sub: 'run:0' }),
      credentialsClaims({ agent_id: 1.5 }),
      credentialsClaims({ agent_id: undefined }),
    ];
    for (const claims of cases) {
      expect(await verifyCredentialsToken(await signRaw(claims), secret, now)).toEqual({ ok: false, reason: 'invalid' });
    }
    const wrongTyp = await signRaw(credentialsClaims(), { typ: 'at+jwt' });
    expect(await verifyCredentialsToken(wrongTyp, secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('zones.md: a zone token is refused as a credentials token', async () => {
    const { token } = await mintZoneToken({ secret, userId: USER, agentId: 7, orgId: ORG, now });
    expect(await verifyCredentialsToken(token, secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: malformed strings are invalid, never a throw', async () => {
    const { token } = await credentials();
    const malformed = ['', 'abc', 'a.b', 'a.b.c', '...', `${token}.extra`, '%%%.%%%.%%%', token.replace('.', ''), ' '.repeat(10)];
    for (const value of malformed) {
      expect(await verifyCredentialsToken(value, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    }
    // A value that is not even a string, as could come from a loosely typed header.
    expect(await verifyCredentialsToken(undefined as unknown as string, secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 4.10: mint refuses bad ids, ttl and short secrets', async () => {
    await expect(mintCredentialsToken({ secret, agentId: 0, runId: 1, now })).rejects.toThrow(RangeError);
    await expect(mintCredentialsToken({ secret, agentId: 1, runId: 1.5, now })).rejects.toThrow(RangeError);
    await expect(mintCredentialsToken({ secret, agentId: 1, runId: 1, now, ttlSeconds: 0 })).rejects.toThrow(RangeError);
    await expect(mintCredentialsToken({ secret: randomBytes(16), agentId: 1, runId: 1, now })).rejects.toThrow(RangeError);
    await expect(verifyCredentialsToken('x', new Uint8Array(0), now)).rejects.toThrow(RangeError);
  });
});

describe('zone token', () => {
  const zone = () => mintZoneToken({ secret, userId: USER, agentId: 7, orgId: ORG, now });

  it('zones.md: minted HS256 with iss/aud/sub/agent_id/org_id and exp = iat + 300', async () => {
    const { token, expiresInSeconds } = await zone();
    expect(expiresInSeconds).toBe(300);
    expect(decodeProtectedHeader(token).alg).toBe('HS256');
    expect(decodeJwt(token)).toEqual({
      iss: 'ars',
      aud: 'ars-zone',
      sub: USER,
      agent_id: 7,
      org_id: ORG,
      iat: nowSeconds,
      exp: nowSeconds + 300,
    });
  });

  it('spec 8.5: a zone token verifies for 5 minutes and then expires', async () => {
    const { token } = await zone();
    expect(await verifyZoneToken(token, secret, later(299))).toEqual({ ok: true, userId: USER, agentId: 7, orgId: ORG });
    expect(await verifyZoneToken(token, secret, later(300))).toEqual({ ok: false, reason: 'expired' });
  });

  // Issue 12 finding 5: a holder of the zone secret could mint a token with any exp; the age counts from iat.
  it('spec 8.5 / issue 12: a zone token older than 5 minutes by iat is expired whatever its exp says', async () => {
    const claims = { iss: 'ars', aud: 'ars-zone', sub: USER, agent_id: 7, org_id: ORG };
    const long = await signRaw({ ...claims, iat: nowSeconds, exp: nowSeconds + 86_400 });
    expect((await verifyZoneToken(long, secret, later(300))).ok).toBe(true);
    expect(await verifyZoneToken(long, secret, later(301))).toEqual({ ok: false, reason: 'expired' });
    expect(await verifyZoneToken(long, secret, later(360))).toEqual({ ok: false, reason: 'expired' });
    // No iat at all: refused.
    expect(await verifyZoneToken(await signRaw({ ...claims, exp: nowSeconds + 300 }), secret, now)).toEqual({ ok: false, reason: 'invalid' });
    // An iat in the future: 30 s of clock skew between instances, no more.
    expect((await verifyZoneToken(await signRaw({ ...claims, iat: nowSeconds + 30, exp: nowSeconds + 330 }), secret, now)).ok).toBe(true);
    expect(await verifyZoneToken(await signRaw({ ...claims, iat: nowSeconds + 31, exp: nowSeconds + 331 }), secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('spec 8.5 / issue 12: a credentials token older than 60 minutes by iat is expired whatever its exp says', async () => {
    const long = await signRaw(credentialsClaims({ exp: nowSeconds + 86_400 }));
    expect((await verifyCredentialsToken(long, secret, later(3600))).ok).toBe(true);
    expect(await verifyCredentialsToken(long, secret, later(3601))).toEqual({ ok: false, reason: 'expired' });
  });

  it('zones.md: a credentials token is refused as a zone token', async () => {
    const { token } = await credentials();
    expect(await verifyZoneToken(token, secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('zones.md: wrong secret, alg none, tampering and missing exp are refused', async () => {
    const { token } = await zone();
    expect(await verifyZoneToken(token, otherSecret, now)).toEqual({ ok: false, reason: 'invalid' });
    const claims = { ...decodeJwt(token) };
    expect(await verifyZoneToken(`${b64url({ alg: 'none' })}.${b64url(claims)}.`, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    const [header, , signature] = token.split('.');
    const forged = `${header}.${b64url({ ...claims, agent_id: 8 })}.${signature}`;
    expect(await verifyZoneToken(forged, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    const { exp: _exp, ...noExp } = claims;
    expect(await verifyZoneToken(await signRaw(noExp), secret, now)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifyZoneToken(await signRaw({ ...claims, org_id: 5 }), secret, now)).toEqual({ ok: false, reason: 'invalid' });
    expect(await verifyZoneToken(await signRaw({ ...claims, sub: '' }), secret, now)).toEqual({ ok: false, reason: 'invalid' });
  });

  it('zones.md: malformed strings are invalid', async () => {
    for (const value of ['', 'x', 'x.y.z']) {
      expect(await verifyZoneToken(value, secret, now)).toEqual({ ok: false, reason: 'invalid' });
    }
  });
});

describe('peekAgentId', () => {
  it('spec 4.10: reads agent_id without verifying, only to choose the key', async () => {
    const { token } = await credentials();
    expect(peekAgentId(token)).toBe(7);
    const { token: zoneToken } = await mintZoneToken({ secret, userId: USER, agentId: 9, orgId: ORG, now });
    expect(peekAgentId(zoneToken)).toBe(9);
    // Unverified: a forged token still peeks, which is why the caller must verify with the chosen key.
    expect(peekAgentId(`${b64url({ alg: 'none' })}.${b64url({ agent_id: 3 })}.`)).toBe(3);
  });

  it('spec 4.10: returns null for anything that is not a token with a positive integer agent_id', () => {
    for (const value of ['', 'garbage', 'a.b.c', `${b64url({ alg: 'HS256' })}.${b64url({ agent_id: '7' })}.sig`, `${b64url({ alg: 'HS256' })}.${b64url({ agent_id: -1 })}.sig`, `${b64url({ alg: 'HS256' })}.${b64url({})}.sig`]) {
      expect(peekAgentId(value)).toBeNull();
    }
  });
});
