// Issue 14 "Sign-in and roles": POST /api/session signs in with the admin token or a personal token and sets a
// session cookie (HttpOnly, SameSite, Secure under https, an expiry, revocable); sign-out ends it; unsafe requests
// under the cookie need a same-origin Origin. The cookie carries a session secret of its own, never the token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { ACCESS, OPERATION_NEEDS } from '../../src/routes/admin/access.ts';
import { seedOrg, seedUser } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { digest } from '../../src/lib/secrets.ts';

const clock = new ManualClock(new Date('2026-05-01T08:00:00Z'));
const ORIGIN = 'http://localhost:8080'; // the default ARS_PUBLIC_URL's origin
let t: TestApp;
let orgId: string;
let member: string;

beforeAll(async () => {
  t = await createTestApp({ clock });
  orgId = await seedOrg(t, 'Acme');
  member = await seedUser(t, { orgId, role: 'admin' });
});
afterAll(async () => t?.close());

async function personalToken(userId: string): Promise<{ id: string; token: string }> {
  const res = await t.app.inject({ method: 'POST', url: `/api/admin/users/${userId}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
  expect(res.statusCode).toBe(201);
  return res.json();
}

async function signIn(token: string, headers: Record<string, string> = { origin: ORIGIN }) {
  return t.app.inject({ method: 'POST', url: '/api/session', headers, payload: { token } });
}

const secretOf = (setCookie: unknown): string => /ars_session=([^;]*)/.exec(String(setCookie))![1]!;
const withCookie = (secret: string, extra: Record<string, string> = {}) => ({ cookie: `ars_session=${secret}`, ...extra });

describe('POST /api/session', () => {
  it('issue 14: the admin token signs in: 201, an HttpOnly SameSite=Lax cookie with a Max-Age, a secret that is not the token', async () => {
    const res = await signIn(ADMIN_TOKEN);
    expect(res.statusCode, res.body).toBe(201);
    const cookie = String(res.headers['set-cookie']);
    expect(cookie).toMatch(/^ars_session=ars_sess_[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Max-Age=43200$/);
    expect(cookie).not.toContain(ADMIN_TOKEN);
    expect(res.headers['cache-control']).toBe('no-store');
    expect(res.json()).toEqual({
      user: { id: null, email: null, name: null, platform_admin: true },
      memberships: [],
      expires_at: '2026-05-01T20:00:00.000Z',
      permissions: OPERATION_NEEDS,
    });
    // The cookie opens the admin API and says who it is.
    const secret = secretOf(cookie);
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/orgs', headers: withCookie(secret) })).statusCode).toBe(200);
    expect((await t.app.inject({ method: 'GET', url: '/api/session', headers: withCookie(secret) })).json()).toMatchObject({ user: { platform_admin: true } });
  });

  it('issue 14: a personal token signs in as its user, with the organizations and roles', async () => {
    const { token } = await personalToken(member);
    const res = await signIn(token);
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json()).toMatchObject({
      user: { id: member, email: `${member}@example.test`, platform_admin: false },
      memberships: [{ org_id: orgId, org_name: 'Acme', role: 'admin' }],
    });
  });

  it('issue 40 item 2: the session says what each admin operation needs, from the API\'s own access table', async () => {
    const { token } = await personalToken(member);
    const { permissions } = (await signIn(token)).json();
    expect(permissions).toEqual(Object.fromEntries(Object.entries(ACCESS).map(([op, rule]) => [op, rule.need])));
    expect(permissions).toMatchObject({ 'POST /runs/:runId/cancel': 'org_admin', 'POST /runs/:runId/waitpoint': 'member', 'POST /orgs': 'platform' });
    expect((await t.app.inject({ method: 'GET', url: '/api/session', headers: { authorization: `Bearer ${token}` } })).json().permissions).toEqual(permissions);
  });

  it('issue 14: a wrong token, a session secret offered as a token, or no token is refused; nothing is set', async () => {
    const session = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    for (const token of ['nope', `${ADMIN_TOKEN}x`, session]) {
      const res = await signIn(token);
      expect(res.statusCode, token).toBe(401);
      expect(res.headers['set-cookie']).toBeUndefined();
    }
    const empty = await t.app.inject({ method: 'POST', url: '/api/session', payload: {} });
    expect(empty.statusCode).toBe(400);
    expect(empty.json().error).toMatch(/token/);
  });

  it('issue 14: another site cannot sign the visitor in (login CSRF); a client that is not a browser can', async () => {
    expect((await signIn(ADMIN_TOKEN, { origin: 'https://evil.example' })).statusCode).toBe(403);
    expect((await signIn(ADMIN_TOKEN, { 'sec-fetch-site': 'cross-site' })).statusCode).toBe(403);
    expect((await signIn(ADMIN_TOKEN, {})).statusCode).toBe(201); // curl sends neither header
  });

  it('issue 14: Secure is added when the public URL is https', async () => {
    const https = await createTestApp({ config: { publicUrl: 'https://ars.example' } });
    try {
      const res = await https.app.inject({ method: 'POST', url: '/api/session', headers: { origin: 'https://ars.example' }, payload: { token: ADMIN_TOKEN } });
      expect(res.statusCode).toBe(201);
      expect(String(res.headers['set-cookie'])).toMatch(/; Secure$/);
    } finally {
      await https.close();
    }
  });
});

describe('a session ends', () => {
  it('issue 14: sign-out (DELETE /api/session) ends it at once and clears the cookie', async () => {
    const secret = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    const out = await t.app.inject({ method: 'DELETE', url: '/api/session', headers: withCookie(secret, { origin: ORIGIN }) });
    expect(out.statusCode).toBe(204);
    expect(String(out.headers['set-cookie'])).toBe('ars_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0');
    expect((await t.app.inject({ method: 'GET', url: '/api/session', headers: withCookie(secret) })).statusCode).toBe(401);
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/runs', headers: withCookie(secret) })).statusCode).toBe(401);
  });

  it('issue 14: a sign-out sent by another site is refused and the session goes on', async () => {
    const secret = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    const out = await t.app.inject({ method: 'DELETE', url: '/api/session', headers: withCookie(secret, { origin: 'https://evil.example' }) });
    expect(out.statusCode).toBe(403);
    expect((await t.app.inject({ method: 'GET', url: '/api/session', headers: withCookie(secret) })).statusCode).toBe(200);
  });

  it('issue 14: at its expiry (ARS_SESSION_TTL_HOURS, 12 by default)', async () => {
    const secret = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    clock.advance(12 * 3_600_000 - 1);
    expect((await t.app.inject({ method: 'GET', url: '/api/session', headers: withCookie(secret) })).statusCode).toBe(200);
    clock.advance(1);
    expect((await t.app.inject({ method: 'GET', url: '/api/session', headers: withCookie(secret) })).statusCode).toBe(401);
  });

  it('issue 14: when the personal token it was made from is revoked', async () => {
    const { id, token } = await personalToken(member);
    const secret = secretOf((await signIn(token)).headers['set-cookie']);
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/agents', headers: withCookie(secret) })).statusCode).toBe(200);
    const revoke = await t.app.inject({ method: 'DELETE', url: `/api/admin/users/${member}/tokens/${id}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(revoke.statusCode).toBe(204);
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/agents', headers: withCookie(secret) })).statusCode).toBe(401);
  });

  it('issue 14: when ARS_ADMIN_TOKEN changes, for sessions signed in with the old one', async () => {
    const secret = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    // As if the service had restarted with another token: the session was signed in with a token no longer configured.
    await t.db.query('UPDATE sessions SET admin_token_digest = $1 WHERE secret_digest = $2', [digest('the-previous-admin-token-0123456789abcdef'), digest(secret)]);
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/orgs', headers: withCookie(secret) })).statusCode).toBe(401);
  });
});

describe('the cookie on the admin API', () => {
  it('issue 14: an unsafe request under the cookie needs the platform origin; a bearer token needs none', async () => {
    const secret = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    const create = (headers: Record<string, string>) => t.app.inject({ method: 'POST', url: '/api/admin/orgs', headers, payload: { name: 'Via cookie' } });
    expect((await create(withCookie(secret, { origin: 'https://evil.example' }))).statusCode).toBe(403);
    expect((await create(withCookie(secret))).statusCode).toBe(403); // neither Origin nor Sec-Fetch-Site
    expect((await create(withCookie(secret, { origin: ORIGIN }))).statusCode).toBe(201);
    expect((await create({ authorization: `Bearer ${ADMIN_TOKEN}` })).statusCode).toBe(201);
  });

  it('issue 14: the raw admin token is a bearer token only, never a cookie value', async () => {
    expect((await t.app.inject({ method: 'GET', url: '/api/admin/orgs', headers: withCookie(ADMIN_TOKEN) })).statusCode).toBe(401);
  });

  it('issue 14: an admin-token session cannot open zone apps (a zone JWT names a user)', async () => {
    const secret = secretOf((await signIn(ADMIN_TOKEN)).headers['set-cookie']);
    expect((await t.app.inject({ method: 'GET', url: '/zones/1/app/', headers: withCookie(secret) })).statusCode).toBe(401);
  });

  it('issue 14: no session secret or token reaches the logs', async () => {
    const { token } = await personalToken(member);
    const secret = secretOf((await signIn(token)).headers['set-cookie']);
    await t.app.inject({ method: 'GET', url: '/api/admin/runs', headers: withCookie(secret) });
    const logs = t.logs.join('');
    expect(logs).not.toContain(secret);
    expect(logs).not.toContain(token);
  });
});
