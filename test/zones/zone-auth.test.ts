// zones.md "Zone endpoints": every zone endpoint is behind the zone JWT of its agent, acting for a user who is
// still a member. One auth matrix for all six endpoints, then the token attacks.
import { randomBytes } from 'node:crypto';
import { SignJWT, decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { mintZoneToken } from '../../src/lib/jwt.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { credentialsToken, zoneSecret, zoneToken } from '../credentials/connections.ts';

let t: TestApp;
let a: SeededAgent;
let b: SeededAgent;
let user: string;

beforeAll(async () => {
  t = await createTestApp();
  const orgId = await seedOrg(t);
  a = await seedAgent(t, { orgId });
  b = await seedAgent(t, { orgId });
  user = await seedUser(t, { orgId });
});
afterAll(async () => t?.close());

const ENDPOINTS: Array<{ method: 'GET' | 'POST'; path: string; payload?: object }> = [
  { method: 'GET', path: '/runs/1' },
  { method: 'POST', path: '/runs/1/waitpoint', payload: {} },
  { method: 'GET', path: '/credentials/github' },
  { method: 'POST', path: '/runs', payload: {} },
  { method: 'POST', path: '/runs/wait', payload: {} },
  { method: 'POST', path: '/runs/download', payload: {} },
];

function call(agentId: number, e: (typeof ENDPOINTS)[number], token?: string) {
  return t.app.inject({
    method: e.method,
    url: `/api/zones/agents/${agentId}${e.path}`,
    headers: token === undefined ? {} : { authorization: `Bearer ${token}` },
    ...(e.payload ? { payload: e.payload } : {}),
  });
}

const probe = ENDPOINTS[0]!;
const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
const nowS = () => Math.floor(Date.now() / 1000);
const zoneClaims = (extra: Record<string, unknown> = {}) => ({
  iss: 'ars', aud: 'ars-zone', sub: user, agent_id: a.agent.id, org_id: a.orgId, iat: nowS(), exp: nowS() + 300, ...extra,
});

describe('zones.md: the auth matrix, on every zone endpoint', () => {
  it.each(ENDPOINTS)('zones.md: $method $path — 401 without a token, 401 malformed, 403 another agent\'s token', async (e) => {
    expect((await call(a.agent.id, e)).statusCode).toBe(401);
    expect((await call(a.agent.id, e, 'not.a.jwt')).statusCode).toBe(401);
    const res = await call(a.agent.id, e, await zoneToken(t, b.agent, user));
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'forbidden' });
  });

  it('zones.md: 401 for an expired zone token (8.5: 5 minutes)', async () => {
    const old = await zoneToken(t, a.agent, user, new Date(Date.now() - 301_000));
    expect((await call(a.agent.id, probe, old)).statusCode).toBe(401);
  });

  it('zones.md: 401 for an unknown agent (nothing to verify with); 403 if the token is genuine for another agent', async () => {
    expect((await call(999_999, probe, await zoneToken(t, a.agent, user))).statusCode).toBe(403);
    expect((await call(999_999, probe, 'x.y.z')).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/zones/agents/abc/runs/1', headers: { authorization: 'Bearer x' } })).statusCode).toBe(401);
  });

  it("zones.md: 403 when the token's user is not (or no longer) a member; a platform admin passes", async () => {
    const outsider = await seedUser(t, { orgId: await seedOrg(t, 'Other') });
    expect((await call(a.agent.id, probe, await zoneToken(t, a.agent, outsider))).statusCode).toBe(403);
    const leaving = await seedUser(t, { orgId: a.orgId });
    const tok = await zoneToken(t, a.agent, leaving);
    expect((await call(a.agent.id, probe, tok)).statusCode).toBe(404); // authenticated: run 1 is simply not there
    await t.db.query('DELETE FROM memberships WHERE user_id = $1', [leaving]);
    expect((await call(a.agent.id, probe, tok)).statusCode).toBe(403);
    const admin = await seedUser(t, { platformAdmin: true });
    expect((await call(a.agent.id, probe, await zoneToken(t, a.agent, admin))).statusCode).toBe(404);
    expect((await call(a.agent.id, probe, await zoneToken(t, a.agent, '00000000-0000-4000-8000-000000000000'))).statusCode).toBe(403);
  });

  it.each([
    ['paused', { status: 'paused' as const }],
    ['archived', { status: 'archived' as const }],
    ['standalone', { managed_by: 'standalone' as const }],
  ])('zones.md: 422 for a %s agent, on every endpoint', async (_name, o) => {
    const x = await seedAgent(t, { orgId: a.orgId, ...o });
    const tok = await zoneToken(t, x.agent, user);
    for (const e of ENDPOINTS) {
      const res = await call(x.agent.id, e, tok);
      expect(res.statusCode, `${e.method} ${e.path}`).toBe(422);
      expect(res.json()).toMatchObject({ code: 'agent_unavailable' });
    }
  });
});

describe('zones.md: zone token attacks', () => {
  it('zones.md: the genuine token authenticates (control)', async () => {
    expect((await call(a.agent.id, probe, await zoneToken(t, a.agent, user))).statusCode).toBe(404);
  });

  it('zones.md: alg none, HS512, a wrong secret → 401', async () => {
    expect((await call(a.agent.id, probe, `${b64({ alg: 'none', typ: 'JWT' })}.${b64(zoneClaims())}.`)).statusCode).toBe(401);
    const hs512 = await new SignJWT(zoneClaims()).setProtectedHeader({ alg: 'HS512', typ: 'JWT' }).sign(zoneSecret(t, a.agent));
    expect((await call(a.agent.id, probe, hs512)).statusCode).toBe(401);
    const wrong = await new SignJWT(zoneClaims()).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(randomBytes(32));
    expect((await call(a.agent.id, probe, wrong)).statusCode).toBe(401);
  });

  it("zones.md: a credentials token is never a zone token → 401 (the agent's own, another agent's, or signed with the zone secret)", async () => {
    expect((await call(a.agent.id, probe, await credentialsToken(t, a.agent))).statusCode).toBe(401);
    expect((await call(a.agent.id, probe, await credentialsToken(t, b.agent))).statusCode).toBe(401);
    const credAud = await new SignJWT({ ...zoneClaims(), aud: 'ars-credentials' }).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(zoneSecret(t, a.agent));
    expect((await call(a.agent.id, probe, credAud)).statusCode).toBe(401);
  });

  it('zones.md: tampered claims on a genuine signature → 401 (user, agent, expiry)', async () => {
    const genuine = await zoneToken(t, a.agent, user);
    const [h, , s] = genuine.split('.');
    const payload = decodeJwt(genuine);
    const admin = await seedUser(t, { platformAdmin: true });
    for (const change of [{ sub: admin }, { agent_id: b.agent.id }, { exp: nowS() + 86_400 }]) {
      expect((await call(a.agent.id, probe, `${h}.${b64({ ...payload, ...change })}.${s}`)).statusCode).toBe(401);
    }
  });

  it("zones.md: agent_id must be the path's agent: a token for B signed with A's secret is refused (403)", async () => {
    const { token } = await mintZoneToken({ secret: zoneSecret(t, a.agent), userId: user, agentId: b.agent.id, orgId: a.orgId, now: new Date() });
    expect((await call(a.agent.id, probe, token)).statusCode).toBe(403);
  });

  it('zones.md: a token without exp → 401', async () => {
    const { exp: _exp, ...noExp } = zoneClaims();
    const tok = await new SignJWT(noExp).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(zoneSecret(t, a.agent));
    expect((await call(a.agent.id, probe, tok)).statusCode).toBe(401);
  });

  // Issue 12 finding 5: verification set no maximum age, so a holder of the zone secret (every zone app) could
  // mint tokens that live as long as it likes. Spec 8.5: a zone JWT lives 5 minutes, counted from iat.
  const signed = (claims: Record<string, unknown>) => new SignJWT(claims).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(zoneSecret(t, a.agent));

  it('spec 8.5 / issue 12: a token issued 6 minutes ago is refused (401) although its exp is in the future', async () => {
    const tok = await signed(zoneClaims({ iat: nowS() - 360, exp: nowS() + 86_400 }));
    const res = await call(a.agent.id, probe, tok);
    expect(res.statusCode).toBe(401);
    expect(res.json()).toMatchObject({ code: 'unauthorized' });
  });

  it('spec 8.5 / issue 12: a token issued 1 minute ago passes (control: 404, run 1 is not there)', async () => {
    expect((await call(a.agent.id, probe, await signed(zoneClaims({ iat: nowS() - 60, exp: nowS() + 240 })))).statusCode).toBe(404);
  });

  it('spec 8.5 / issue 12: a token without iat → 401', async () => {
    const { iat: _iat, ...noIat } = zoneClaims();
    expect((await call(a.agent.id, probe, await signed(noIat))).statusCode).toBe(401);
  });

  it('issue 12: an iat in the future is refused beyond 30 s of clock skew', async () => {
    expect((await call(a.agent.id, probe, await signed(zoneClaims({ iat: nowS() + 120, exp: nowS() + 420 })))).statusCode).toBe(401);
    expect((await call(a.agent.id, probe, await signed(zoneClaims({ iat: nowS() + 10, exp: nowS() + 310 })))).statusCode).toBe(404);
  });

  it('zones.md: a rotated zone secret invalidates tokens minted with the old one', async () => {
    const x = await seedAgent(t, { orgId: a.orgId });
    const tok = await zoneToken(t, x.agent, user);
    expect((await call(x.agent.id, probe, tok)).statusCode).toBe(404);
    await t.db.query('UPDATE agents SET zone_secret_enc = $2 WHERE id = $1', [x.agent.id, t.ctx.secrets.seal(`ars_zone_${randomBytes(32).toString('base64url')}`, sealedAt('agents', 'zone_secret_enc', x.agent.id))]);
    await t.ctx.agents.changed(x.agent.id);
    expect((await call(x.agent.id, probe, tok)).statusCode).toBe(401);
  });
});
