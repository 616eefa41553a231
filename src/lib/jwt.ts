// Credentials tokens (spec 4.10, part 5) and zone tokens (zones.md): HS256 JWTs minted and verified with jose.
// Every verification pins the algorithm, the issuer, the audience and a required `exp`/`iat`, so a token of
// one kind can never stand in for the other and `alg: none` or an asymmetric algorithm is never accepted.
// Each kind also has a maximum age counted from `iat`, whatever `exp` says: a holder of a signing secret (a zone
// app holds its zone secret) cannot make a token that outlives the contract's lifetime (spec 8.5).
import { SignJWT, decodeJwt, errors, jwtVerify, type JWTPayload } from 'jose';

const ISSUER = 'ars';
const CREDENTIALS_AUDIENCE = 'ars-credentials';
const ZONE_AUDIENCE = 'ars-zone';
const ALG = 'HS256';
// RFC 7518 3.2: an HS256 key must be at least as long as the hash output.
const MIN_SECRET_BYTES = 32;
/** spec 8.5: a credentials token lives 60 minutes, a zone JWT 5 minutes; older is refused as expired. */
const CREDENTIALS_MAX_AGE_SECONDS = 3600;
const ZONE_MAX_AGE_SECONDS = 300;
/** How far in the future an `iat` may be (clocks of the instances that mint and verify differ a little). */
const IAT_SKEW_SECONDS = 30;

export type TokenFailure = { ok: false; reason: 'invalid' | 'expired' };
export type CredentialsTokenResult = { ok: true; agentId: number; runId: number } | TokenFailure;
export type ZoneTokenResult = { ok: true; userId: string; agentId: number; orgId: string } | TokenFailure;

export interface MintCredentialsTokenInput {
  secret: Uint8Array;
  agentId: number;
  runId: number;
  now: Date;
  /** spec 8.5: 60 minutes. */
  ttlSeconds?: number;
}

export interface MintZoneTokenInput {
  secret: Uint8Array;
  userId: string;
  agentId: number;
  orgId: string;
  now: Date;
  /** spec 8.5 / zones.md: 5 minutes. */
  ttlSeconds?: number;
}

export async function mintCredentialsToken(
  input: MintCredentialsTokenInput,
): Promise<{ token: string; expiresInSeconds: number }> {
  const { secret, agentId, runId, now, ttlSeconds = 3600 } = input;
  assertId('agentId', agentId);
  assertId('runId', runId);
  const token = await sign(secret, now, ttlSeconds, CREDENTIALS_AUDIENCE, `run:${runId}`, {
    agent_id: agentId,
    run_id: runId,
  });
  return { token, expiresInSeconds: ttlSeconds };
}

export async function verifyCredentialsToken(
  token: string,
  secret: Uint8Array,
  now: Date,
): Promise<CredentialsTokenResult> {
  const verified = await verify(token, secret, now, CREDENTIALS_AUDIENCE, CREDENTIALS_MAX_AGE_SECONDS);
  if (!verified.ok) return verified;
  const { agent_id: agentId, run_id: runId, sub } = verified.payload;
  // Claims are only trusted when their shape is exactly what mintCredentialsToken writes.
  if (!isId(agentId) || !isId(runId) || sub !== `run:${runId}`) return INVALID;
  return { ok: true, agentId, runId };
}

export async function mintZoneToken(input: MintZoneTokenInput): Promise<{ token: string; expiresInSeconds: number }> {
  const { secret, userId, agentId, orgId, now, ttlSeconds = 300 } = input;
  assertId('agentId', agentId);
  if (userId === '' || orgId === '') throw new RangeError('userId and orgId must be non-empty');
  const token = await sign(secret, now, ttlSeconds, ZONE_AUDIENCE, userId, { agent_id: agentId, org_id: orgId });
  return { token, expiresInSeconds: ttlSeconds };
}

export async function verifyZoneToken(token: string, secret: Uint8Array, now: Date): Promise<ZoneTokenResult> {
  const verified = await verify(token, secret, now, ZONE_AUDIENCE, ZONE_MAX_AGE_SECONDS);
  if (!verified.ok) return verified;
  const { agent_id: agentId, org_id: orgId, sub: userId } = verified.payload;
  if (!isId(agentId) || !isNonEmptyString(orgId) || !isNonEmptyString(userId)) return INVALID;
  return { ok: true, userId, agentId, orgId };
}

/**
 * Reads `agent_id` from a token WITHOUT verifying it. Its only legitimate use is choosing which agent's secret
 * to verify the token with; nothing read here may be trusted or acted on before verify*Token succeeds with
 * that secret (and the caller then checks the verified agentId against the path).
 */
export function peekAgentId(token: string): number | null {
  try {
    const agentId = decodeJwt(token).agent_id;
    return isId(agentId) ? agentId : null;
  } catch {
    return null;
  }
}

const INVALID: TokenFailure = { ok: false, reason: 'invalid' };

async function sign(
  secret: Uint8Array,
  now: Date,
  ttlSeconds: number,
  audience: string,
  subject: string,
  claims: JWTPayload,
): Promise<string> {
  assertSecret(secret);
  if (!Number.isInteger(ttlSeconds) || ttlSeconds <= 0) throw new RangeError('ttlSeconds must be a positive integer');
  const iat = Math.floor(now.getTime() / 1000);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: ALG, typ: 'JWT' })
    .setIssuer(ISSUER)
    .setAudience(audience)
    .setSubject(subject)
    .setIssuedAt(iat)
    .setExpirationTime(iat + ttlSeconds)
    .sign(secret);
}

async function verify(
  token: string,
  secret: Uint8Array,
  now: Date,
  audience: string,
  maxAgeSeconds: number,
): Promise<{ ok: true; payload: JWTPayload } | TokenFailure> {
  assertSecret(secret);
  if (typeof token !== 'string' || token === '') return INVALID;
  let payload: JWTPayload;
  try {
    const verified = await jwtVerify(token, secret, {
      algorithms: [ALG],
      issuer: ISSUER,
      audience,
      typ: 'JWT',
      currentDate: now,
      requiredClaims: ['exp', 'iat'],
    });
    payload = verified.payload;
  } catch (err) {
    // Only a token that was otherwise valid reaches the expiry check, so "expired" never leaks anything about
    // a forged token; every other failure (malformed, bad signature, wrong alg/aud/iss) is just "invalid".
    if (err instanceof errors.JWTExpired && err.claim === 'exp') return { ok: false, reason: 'expired' };
    if (err instanceof errors.JOSEError || err instanceof TypeError) return INVALID;
    throw err;
  }
  // jose checked that iat is a number; its age is ours to bound (jose's maxTokenAge allows no skew at all).
  const age = Math.floor(now.getTime() / 1000) - (payload.iat as number);
  if (age < -IAT_SKEW_SECONDS) return INVALID;
  if (age > maxAgeSeconds) return { ok: false, reason: 'expired' };
  return { ok: true, payload };
}

function assertSecret(secret: Uint8Array): void {
  // A short or missing secret is a configuration bug, not a bad token: fail loudly.
  if (!(secret instanceof Uint8Array) || secret.byteLength < MIN_SECRET_BYTES) {
    throw new RangeError(`token secret must be at least ${MIN_SECRET_BYTES} bytes`);
  }
}

function assertId(name: string, value: number): void {
  if (!isId(value)) throw new RangeError(`${name} must be a positive safe integer`);
}

function isId(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value > 0;
}

function isNonEmptyString(value: unknown): value is string {
  return typeof value === 'string' && value !== '';
}
