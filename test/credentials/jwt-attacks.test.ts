// Spec 4.10 / part 5: the credentials token as an attacker would bend it. Everything but a genuine, unexpired
// token of the agent is refused: 403 only for a genuine token of another agent, 401 for the rest.
import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintZoneToken } from '../../src/lib/jwt.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { credentialsSecret, credentialsToken, seedConnection, zoneToken } from './connections.ts';

let t: TestApp;
let a: SeededAgent;
let b: SeededAgent;
let conn: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await seedAgent(t);
  b = await seedAgent(t);
  conn = await seedConnection(t, a.agent.id, { type: 'api_key', secret: { value: 'the-api-key-value' } });
});
afterAll(async () => t?.close());

const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const nowS = () => Math.floor(Date.now() / 1000);
const claims = (agentId: number, extra: Record<string, unknown> = {}) => ({
  iss: 'ars',
  aud: 'ars-credentials',
  sub: 'run:3',
  agent_id: agentId,
  run_id: 3,
  iat: nowS(),
  exp: nowS() + 600,
  ...extra,
});

async function status(token: string): Promise<number> {
  const res = await t.app.inject({ method: 'GET', url: `/api/credentials/${conn}/resolve`, headers: { ...a.agentAuth, 'x-credentials-token': token } });
  if (res.statusCode !== 200) expect(res.body).not.toContain('the-api-key-value');
  return res.statusCode;
}

describe('spec 4.10: credentials token attacks', () => {
  it('spec 4.10: the genuine token works (control)', async () => {
    expect(await status(await credentialsToken(t, a.agent))).toBe(200);
  });

  it('spec 4.10: alg "none" → 401', async () => {
    expect(await status(`${b64({ alg: 'none', typ: 'JWT' })}.${b64(claims(a.agent.id))}.`)).toBe(401);
  });

  it('spec 4.10: HS512 with the right secret (algorithm not pinned would accept it) → 401', async () => {
    const tok = await new SignJWT(claims(a.agent.id)).setProtectedHeader({ alg: 'HS512', typ: 'JWT' }).sign(credentialsSecret(t, a.agent));
    expect(await status(tok)).toBe(401);
  });

  it('spec 4.10: the right claims signed with a wrong secret → 401', async () => {
    const tok = await new SignJWT(claims(a.agent.id)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(randomBytes(32));
    expect(await status(tok)).toBe(401);
  });

  it('spec 4.10: a genuine token of another agent → 403; the same claims re-signed with a wrong key → 401', async () => {
    expect(await status(await credentialsToken(t, b.agent))).toBe(403);
    const forged = await new SignJWT(claims(b.agent.id)).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(randomBytes(32));
    expect(await status(forged)).toBe(401);
  });

  it('spec 4.10 / 8.5: expired → 401, including one signed right and expired a second ago', async () => {
    expect(await status(await credentialsToken(t, a.agent, 1, new Date(Date.now() - 3_601_000)))).toBe(401);
    const tok = await new SignJWT(claims(a.agent.id, { exp: nowS() - 1 })).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(credentialsSecret(t, a.agent));
    expect(await status(tok)).toBe(401);
  });

  it('spec 4.10: tampered claims on a genuine signature → 401 (run, agent, expiry)', async () => {
    const genuine = await credentialsToken(t, a.agent, 5);
    const [h, , s] = genuine.split('.');
    const payload = decodeJwt(genuine);
    for (const change of [{ run_id: 6, sub: 'run:6' }, { agent_id: b.agent.id }, { exp: nowS() + 86_400 }]) {
      expect(await status(`${h}.${b64({ ...payload, ...change })}.${s}`)).toBe(401);
    }
  });

  it('zones.md: a zone JWT is never a credentials token → 401 (even signed with the credentials secret)', async () => {
    const user = await seedUser(t, { orgId: a.orgId });
    expect(await status(await zoneToken(t, a.agent, user))).toBe(401);
    const { token } = await mintZoneToken({ secret: credentialsSecret(t, a.agent), userId: user, agentId: a.agent.id, orgId: a.orgId, now: new Date() });
    expect(await status(token)).toBe(401);
    // And another agent's zone token is not "another agent's credentials token": 401, not 403.
    expect(await status(await zoneToken(t, b.agent, user))).toBe(401);
  });

  it('spec 4.10: a credentials token without exp → 401', async () => {
    const { exp: _exp, ...noExp } = claims(a.agent.id);
    const tok = await new SignJWT(noExp).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(credentialsSecret(t, a.agent));
    expect(await status(tok)).toBe(401);
  });
});
