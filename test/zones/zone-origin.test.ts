// Issue 12 finding 1: every zone app is served from the platform's one origin, where the session cookie lives.
// Its answers are sandboxed in a way it cannot lift, it cannot send headers that act for the whole origin, and
// an unsafe request signed in by the session cookie must come from the platform's own pages (CSRF).
// decisions.md "Zone apps on the platform origin" and "Cookies, CSRF and zone tokens".
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { ZONE_SANDBOX_CSP } from '../../src/routes/zone-proxy/response-headers.ts';
import { FakeZoneApp } from './fake-zone-app.ts';
import { seedUserToken } from './zone-fixtures.ts';

const PLATFORM = 'https://ars.example.test';
let t: TestApp;
let base: string;
let zone: FakeZoneApp;
let a: SeededAgent;
let memberToken: string;

beforeAll(async () => {
  zone = await new FakeZoneApp().start();
  t = await createTestApp({ config: { publicUrl: `${PLATFORM}/`, outboundAllowHosts: ['127.0.0.1'] } }); // the zone app listens on loopback
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${addr.port}`;
  const orgId = await seedOrg(t);
  a = await seedAgent(t, { orgId, zone_app_url: zone.url });
  memberToken = (await seedUserToken(t, await seedUser(t, { orgId }))).token;
});
afterAll(async () => {
  await t?.close();
  await zone?.stop();
});
beforeEach(() => zone.reset());

async function call(method: string, path: string, headers: Record<string, string>, body?: string) {
  const res = await request(`${base}/zones/${a.agent.id}/app${path}`, { method: method as 'GET', headers, body });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}
const cookie = () => ({ cookie: `ars_session=${memberToken}` });
const bearer = () => ({ authorization: `Bearer ${memberToken}` });
/** Every Content-Security-Policy the browser would enforce: one per header, and one per comma within a header. */
const policies = (h: string | string[] | undefined) => ([] as string[]).concat(h ?? []).flatMap((v) => v.split(',')).map((p) => p.trim());

describe('issue 12 / zones.md: a zone answer runs in a sandbox the app cannot lift', () => {
  it('issue 12: an answer without a CSP gets ours (no allow-same-origin), nosniff, COOP and CORP', async () => {
    const res = await call('GET', '/page', bearer());
    expect(res.status).toBe(201);
    expect(policies(res.headers['content-security-policy'])).toEqual([ZONE_SANDBOX_CSP]);
    expect(ZONE_SANDBOX_CSP).toMatch(/^sandbox allow-scripts allow-forms /);
    expect(ZONE_SANDBOX_CSP).not.toMatch(/allow-same-origin|allow-top-navigation/);
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
    });
  });

  it.each([
    [['sandbox allow-scripts allow-same-origin']],
    [["default-src 'self'; script-src 'unsafe-inline'"]],
    [['sandbox allow-same-origin allow-top-navigation', "frame-ancestors *"]],
  ])('issue 12: the app\'s own CSP %j is sent after ours, never instead of it', async (own) => {
    const query = own.map((c) => `csp=${encodeURIComponent(c)}`).join('&');
    const res = await call('GET', `/hostile?${query}`, bearer());
    expect(res.status).toBe(200);
    // Browsers enforce every policy: an added one can only narrow the sandbox, never lift it.
    expect(policies(res.headers['content-security-policy'])).toEqual([ZONE_SANDBOX_CSP, ...own]);
  });

  it('issue 12: headers that act for the whole platform origin are dropped; ours replace the app\'s; the rest pass', async () => {
    const res = await call('GET', '/hostile', bearer());
    expect(res.status).toBe(200);
    for (const name of [
      'set-cookie', 'service-worker-allowed', 'clear-site-data', 'access-control-allow-origin', 'access-control-allow-credentials',
      'access-control-expose-headers', 'strict-transport-security', 'alt-svc', 'nel', 'report-to', 'www-authenticate',
    ]) {
      expect(res.headers[name], name).toBeUndefined();
    }
    expect(res.headers).toMatchObject({
      'x-content-type-options': 'nosniff',
      'cross-origin-opener-policy': 'same-origin',
      'cross-origin-resource-policy': 'same-origin',
      'content-security-policy': ZONE_SANDBOX_CSP,
      // Report-only policies enforce nothing: kept for the app's own use.
      'content-security-policy-report-only': "default-src 'none'",
      'x-zone-app': 'yes',
      'content-type': 'text/html',
    });
  });

  it('issue 12: no cookie at all reaches the zone app (every cookie here belongs to the platform origin)', async () => {
    const res = await call('GET', '/page', { cookie: `zone_pref=dark; ars_session=${memberToken}; ui_theme=1` });
    expect(res.status).toBe(201);
    expect(zone.requests[0]!.headers.cookie).toBeUndefined();
  });

  it('issue 12: a service-worker script fetch is refused (403) and never reaches the zone app', async () => {
    const res = await call('GET', '/sw.js', { ...bearer(), 'service-worker': 'script' });
    expect(res.status).toBe(403);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'forbidden', requestId: expect.any(String) });
    expect(zone.requests).toHaveLength(0);
  });
});

describe('issue 12: CSRF — unsafe requests signed in by the session cookie come from the platform\'s own pages', () => {
  it.each([
    ['a foreign Origin', { origin: 'https://evil.example' }],
    ['Origin: null (a sandboxed page, a zone app\'s own included)', { origin: 'null' }],
    ['the platform host on another scheme', { origin: 'http://ars.example.test' }],
    ['Sec-Fetch-Site: cross-site without Origin', { 'sec-fetch-site': 'cross-site' }],
    ['Sec-Fetch-Site: same-site without Origin', { 'sec-fetch-site': 'same-site' }],
    ['neither Origin nor Sec-Fetch-Site', {}],
  ])('issue 12: a cookie-signed POST with %s is 403 and nothing reaches the zone app', async (_name, headers) => {
    const res = await call('POST', '/items', { ...cookie(), 'content-type': 'application/json', ...headers }, '{"delete":"all"}');
    expect(res.status).toBe(403);
    const body = JSON.parse(res.text);
    expect(body).toEqual({ error: expect.any(String), code: 'forbidden', requestId: expect.any(String) });
    expect(zone.requests).toHaveLength(0);
  });

  it('issue 12: PUT, PATCH and DELETE are unsafe too', async () => {
    for (const method of ['PUT', 'PATCH', 'DELETE']) {
      expect((await call(method, '/items/1', { ...cookie(), origin: 'https://evil.example' })).status, method).toBe(403);
    }
    expect(zone.requests).toHaveLength(0);
  });

  it('issue 12: the platform\'s own Origin, or Sec-Fetch-Site same-origin, passes', async () => {
    const sameOrigin = await call('POST', '/items', { ...cookie(), origin: PLATFORM, 'content-type': 'text/plain' }, 'one');
    expect(sameOrigin.status).toBe(201);
    const fetchMeta = await call('POST', '/items', { ...cookie(), 'sec-fetch-site': 'same-origin', 'content-type': 'text/plain' }, 'two');
    expect(fetchMeta.status).toBe(201);
    expect(zone.requests.map((r) => r.body)).toEqual(['one', 'two']);
  });

  it('issue 12: safe methods pass whatever their Origin (navigations and links keep working)', async () => {
    expect((await call('GET', '/page', { ...cookie(), origin: 'https://evil.example', 'sec-fetch-site': 'cross-site' })).status).toBe(201);
    expect((await call('OPTIONS', '/page', { ...cookie(), origin: 'null' })).status).toBe(201);
    expect(zone.requests).toHaveLength(2);
  });

  it('issue 12: a bearer-signed request is unaffected, even with a foreign Origin and a session cookie beside it', async () => {
    const plain = await call('POST', '/items', { ...bearer(), origin: 'https://evil.example', 'content-type': 'text/plain' }, 'x');
    expect(plain.status).toBe(201);
    const both = await call('DELETE', '/items/1', { ...bearer(), ...cookie(), origin: 'null' });
    expect(both.status).toBe(201);
    expect(zone.requests).toHaveLength(2);
  });

  it('issue 12: with neither a bearer nor a session cookie it stays 401 (nothing to forge)', async () => {
    expect((await call('POST', '/items', { origin: 'https://evil.example' })).status).toBe(401);
  });
});
