// Issue 14 "Zone apps opened inside the console through the zone proxy, isolated so they cannot script the console".
// A zone answer runs in an opaque origin (issue 12), so the browser sends no session cookie on the app's own
// requests; a page opened with the cookie is sent on to a framed address whose pass signs those requests in
// (src/zones/zone-frame-pass.ts; docs/decisions.md "Zone apps inside the console").
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { FakeZoneApp } from './fake-zone-app.ts';
import { seedUserToken } from './zone-fixtures.ts';

const ORIGIN = 'http://localhost:8080'; // the default ARS_PUBLIC_URL's origin: the console's own pages
let t: TestApp;
let base: string;
let zone: FakeZoneApp;
let a: SeededAgent;
let b: SeededAgent;
let memberToken: string;

beforeAll(async () => {
  zone = await new FakeZoneApp().start();
  t = await createTestApp({ config: { outboundAllowHosts: ['127.0.0.1'] } }); // the zone app listens on loopback
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${addr.port}`;
  const orgId = await seedOrg(t);
  a = await seedAgent(t, { orgId, zone_app_url: zone.url });
  b = await seedAgent(t, { orgId, zone_app_url: zone.url });
  memberToken = (await seedUserToken(t, await seedUser(t, { orgId }))).token;
});
afterAll(async () => {
  await t?.close();
  await zone?.stop();
});
beforeEach(() => zone.reset());

async function get(path: string, headers: Record<string, string> = {}) {
  const res = await request(`${base}${path}`, { headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

async function signIn(): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: '/api/session', payload: { token: memberToken }, headers: { origin: ORIGIN } });
  expect(res.statusCode).toBe(201);
  return /ars_session=([^;]+)/.exec(String(res.headers['set-cookie']))![1]!;
}

const navigate = (secret: string) => ({ cookie: `ars_session=${secret}`, 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'iframe' });

/** The framed address a page opened with the cookie is sent to. */
async function framedAddress(agentId: number, secret: string, path = '/'): Promise<string> {
  const res = await get(`/zones/${agentId}/app${path}`, navigate(secret));
  expect(res.status).toBe(303);
  expect(res.headers['cache-control']).toBe('no-store');
  return String(res.headers.location);
}

describe('zone apps in a console frame', () => {
  it('issue 35 finding 4: a failing framed request (zone app down, 502) logs no pass, nor the session cookie', async () => {
    const { unusedUrl } = await import('../fakes/fake-http-server.ts');
    const down = await seedAgent(t, { orgId: a.orgId, zone_app_url: await unusedUrl() });
    const secret = await signIn();
    const location = await framedAddress(down.agent.id, secret, '/report?key=zone-app-secret');
    const pass = /\/framed\/([^/]+)\//.exec(location)![1]!;
    const from = t.logs.length;
    const res = await get(location);
    expect(res.status).toBe(502);
    const logged = t.logs.slice(from).join('\n');
    expect(logged).toContain('request failed'); // the 5xx line was written, with its URL masked
    expect(logged).toContain(`/zones/${down.agent.id}/framed/[REDACTED]`);
    for (const secretText of [pass, secret, 'zone-app-secret']) expect(logged).not.toContain(secretText);
  });

  it('a page opened with the session cookie is sent (303) to its framed address, path and query kept', async () => {
    const secret = await signIn();
    const location = await framedAddress(a.agent.id, secret, '/reports/q3?tab=2');
    expect(location).toMatch(new RegExp(`^/zones/${a.agent.id}/framed/[0-9a-f-]{36}\\.[A-Za-z0-9_-]{43}/reports/q3\\?tab=2$`));
    // The app's root keeps its trailing slash, so the app's relative URLs stay under the pass.
    expect(await framedAddress(a.agent.id, secret, '')).toMatch(/\/framed\/[^/]+\/$/);
    expect(zone.requests).toHaveLength(0);
  });

  it('the framed address signs in the app’s own requests without any cookie, with a zone JWT as for /app', async () => {
    const location = await framedAddress(a.agent.id, await signIn(), '/app.js?v=1');
    const res = await get(location);
    expect(res.status).toBe(201); // the fake zone app's answer, passed through
    expect(zone.requests).toHaveLength(1);
    const seen = zone.requests[0]!;
    expect(seen.url).toBe('/app.js?v=1');
    expect(seen.headers['x-zone-token']).toMatch(/^ey/);
    expect(seen.headers['x-forwarded-prefix']).toBe(location.slice(0, location.indexOf('/app.js')));
    expect(seen.headers.cookie).toBeUndefined();
    // The app's own opaque-origin page asks for it (CORP same-origin would refuse); the pass is never sent on.
    expect(res.headers['cross-origin-resource-policy']).toBe('cross-origin');
    expect(res.headers['referrer-policy']).toBe('no-referrer');
    expect(String(res.headers['content-security-policy'])).toMatch(/^sandbox allow-scripts/);
  });

  it('a pass opens its own agent’s zone app only: not another agent’s, and not when altered', async () => {
    const location = await framedAddress(a.agent.id, await signIn());
    const pass = location.split('/')[4]!;
    expect((await get(`/zones/${b.agent.id}/framed/${pass}/`)).status).toBe(401);
    const altered = pass.slice(0, -1) + (pass.endsWith('A') ? 'B' : 'A');
    expect((await get(`/zones/${a.agent.id}/framed/${altered}/`)).status).toBe(401);
    expect((await get(`/zones/${a.agent.id}/framed/not-a-pass/`)).status).toBe(401);
    expect(zone.requests).toHaveLength(0);
  });

  it('a pass ends with its session (sign-out)', async () => {
    const secret = await signIn();
    const location = await framedAddress(a.agent.id, secret);
    expect((await get(location)).status).toBe(201);
    const out = await t.app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie: `ars_session=${secret}`, origin: ORIGIN } });
    expect(out.statusCode).toBeLessThan(300);
    expect((await get(location)).status).toBe(401);
  });

  it('no redirect for a bearer token, for the app’s own (non-navigation) requests, or for writes', async () => {
    const secret = await signIn();
    expect((await get(`/zones/${a.agent.id}/app/`, { authorization: `Bearer ${memberToken}`, 'sec-fetch-mode': 'navigate' })).status).toBe(201);
    expect((await get(`/zones/${a.agent.id}/app/`, { cookie: `ars_session=${secret}`, 'sec-fetch-mode': 'no-cors' })).status).toBe(201);
    expect(zone.requests).toHaveLength(2);
  });
});
