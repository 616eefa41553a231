// zones.md "The proxy mints the zone JWT": ANY /zones/{agentId}/app/* → {zone_app_url}/*, over real sockets, with
// a real upstream that records exactly what reached it.
import { request as httpRequest } from 'node:http';
import { request } from 'undici';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { verifyZoneToken } from '../../src/lib/jwt.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { zoneSecret } from '../credentials/connections.ts';
import { FakeZoneApp } from './fake-zone-app.ts';
import { seedUserToken } from './zone-fixtures.ts';

let t: TestApp;
let base: string;
let zone: FakeZoneApp;
let a: SeededAgent;
let member: string;
let memberToken: string;
const clock = new ManualClock(new Date());

beforeAll(async () => {
  zone = await new FakeZoneApp().start();
  t = await createTestApp({ clock, config: { outboundAllowHosts: ['127.0.0.1'] } }); // the zone app listens on loopback
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  const addr = t.app.server.address();
  if (!addr || typeof addr === 'string') throw new Error('no address');
  base = `http://127.0.0.1:${addr.port}`;
  const orgId = await seedOrg(t);
  a = await seedAgent(t, { orgId, zone_app_url: `${zone.url}/base/` });
  member = await seedUser(t, { orgId });
  memberToken = (await seedUserToken(t, member)).token;
});
afterAll(async () => {
  await t?.close();
  await zone?.stop();
});
beforeEach(() => zone.reset());

const url = (path: string, agentId = a.agent.id) => `${base}/zones/${agentId}/app${path}`;
const bearer = (token = memberToken) => ({ authorization: `Bearer ${token}` });

async function get(path: string, headers: Record<string, string> = bearer(), agentId?: number) {
  const res = await request(url(path, agentId), { method: 'GET', headers });
  const text = await res.body.text();
  return { status: res.statusCode, headers: res.headers, text };
}

describe('zones.md: who passes the proxy', () => {
  it('zones.md: a member passes with a personal bearer token; path and query are kept under zone_app_url', async () => {
    const res = await get('/reports/42?range=7d&tag=a&tag=b');
    expect(res.status).toBe(201);
    expect(JSON.parse(res.text)).toMatchObject({ method: 'GET', url: '/base/reports/42?range=7d&tag=a&tag=b' });
    expect(zone.requests).toHaveLength(1);
  });

  it('zones.md: the session cookie signs a member in too; no cookie is forwarded (issue 12: they are all the platform\'s)', async () => {
    const res = await get('/page', { cookie: `zone_pref=dark; ars_session=${memberToken}; other=1` });
    expect(res.status).toBe(201);
    expect(zone.requests[0]!.headers.cookie).toBeUndefined();
    expect(JSON.stringify(zone.requests[0]!.headers)).not.toContain(memberToken);
  });

  it('zones.md: 401 without a user, with an unknown token, or a revoked one', async () => {
    expect((await get('/x', {})).status).toBe(401);
    expect((await get('/x', bearer('ars_user_unknown'))).status).toBe(401);
    expect((await get('/x', { cookie: 'ars_session=ars_user_unknown' })).status).toBe(401);
    const revoked = await seedUserToken(t, member);
    expect((await get('/x', bearer(revoked.token))).status).toBe(201);
    await t.db.query('DELETE FROM user_tokens WHERE id = $1', [revoked.id]);
    expect((await get('/x', bearer(revoked.token))).status).toBe(401);
    expect(zone.requests).toHaveLength(1);
  });

  it('zones.md: 403 for a non-member; a platform admin passes', async () => {
    const outsider = await seedUser(t, { orgId: await seedOrg(t, 'Other') });
    const res = await get('/x', bearer((await seedUserToken(t, outsider)).token));
    expect(res.status).toBe(403);
    const admin = await seedUser(t, { platformAdmin: true });
    expect((await get('/x', bearer((await seedUserToken(t, admin)).token))).status).toBe(201);
    expect(zone.requests).toHaveLength(1);
  });

  it('zones.md: 404 for an unknown agent, a non-numeric id, or an agent without a zone app', async () => {
    const noZone = await seedAgent(t, { orgId: a.orgId });
    expect((await get('/x', bearer(), 999_999)).status).toBe(404);
    expect((await request(`${base}/zones/abc/app/x`, { headers: bearer() })).statusCode).toBe(404);
    expect((await get('/x', bearer(), noZone.agent.id)).status).toBe(404);
    expect(zone.requests).toHaveLength(0);
  });

  it('zones.md: the root of the zone app is reachable with and without a trailing slash', async () => {
    expect(JSON.parse((await get('')).text).url).toBe('/base/');
    expect(JSON.parse((await get('/?a=1')).text).url).toBe('/base/?a=1');
  });
});

describe('zones.md: what the zone app receives', () => {
  it('zones.md: a fresh zone JWT on every request (X-Zone-Token), each verifying for the user and agent; never the user\'s token', async () => {
    await get('/one');
    clock.advance(1000);
    await get('/two');
    const [first, second] = zone.requests.map((r) => r.headers['x-zone-token'] as string);
    expect(first).toBeTruthy();
    expect(second).toBeTruthy();
    expect(first).not.toBe(second);
    for (const token of [first!, second!]) {
      const v = await verifyZoneToken(token, zoneSecret(t, a.agent), clock.now());
      expect(v).toEqual({ ok: true, userId: member, agentId: a.agent.id, orgId: a.orgId });
    }
    // 8.5: five minutes.
    expect((await verifyZoneToken(first!, zoneSecret(t, a.agent), new Date(clock.now().getTime() + 301_000))).ok).toBe(false);
    for (const r of zone.requests) {
      expect(r.headers.authorization).toBeUndefined();
      expect(JSON.stringify(r.headers)).not.toContain(memberToken);
    }
  });

  it('zones.md: a client-made X-Zone-Token, hop-by-hop headers and Proxy-Authorization are not forwarded; others are', async () => {
    const res = await rawRequest('GET', `/zones/${a.agent.id}/app/h`, {
      ...bearer(),
      'x-zone-token': 'forged',
      'proxy-authorization': 'Basic abc',
      connection: 'keep-alive, x-hop-only',
      'x-hop-only': 'drop-me',
      'x-custom': 'keep-me',
      'accept-language': 'de',
    });
    expect(res.status).toBe(201);
    const h = zone.requests[0]!.headers;
    expect(h['x-zone-token']).not.toBe('forged');
    expect(h['proxy-authorization']).toBeUndefined();
    expect(h['x-hop-only']).toBeUndefined();
    expect(h['x-custom']).toBe('keep-me');
    expect(h['accept-language']).toBe('de');
    expect(h['x-forwarded-prefix']).toBe(`/zones/${a.agent.id}/app`);
  });

  it('zones.md: the answer comes back with its status and headers; the zone app sets no cookie (issue 12); its hop-by-hop headers are dropped', async () => {
    const res = await get('/page');
    expect(res.status).toBe(201);
    expect(res.headers['x-zone-app']).toBe('yes');
    expect(res.headers['x-upstream-hop']).toBeUndefined();
    // Neither ars_session nor any other cookie: a cookie set here would reach every zone app and the platform.
    expect(res.headers['set-cookie']).toBeUndefined();
  });

  it('zones.md: methods and bodies pass through (POST JSON, PUT text)', async () => {
    const post = await request(url('/items'), { method: 'POST', headers: { ...bearer(), 'content-type': 'application/json' }, body: '{"a":1}' });
    expect(JSON.parse(await post.body.text())).toMatchObject({ method: 'POST', body: '{"a":1}' });
    const put = await request(url('/items/1'), { method: 'PUT', headers: { ...bearer(), 'content-type': 'text/plain' }, body: 'hello' });
    expect(JSON.parse(await put.body.text())).toMatchObject({ method: 'PUT', body: 'hello' });
    expect(zone.requests[1]!.headers['content-type']).toBe('text/plain');
    // No content type at all, body chunked: still forwarded untouched.
    const bare = await rawRequest('POST', `/zones/${a.agent.id}/app/bare`, bearer(), 'no-type-body');
    expect(JSON.parse(bare.body)).toMatchObject({ method: 'POST', body: 'no-type-body' });
  });

  it('zones.md: dot segments cannot climb out of zone_app_url (400, nothing forwarded)', async () => {
    for (const path of ['/%2e%2e/secret', '/a/../../secret', '/./x', '/a/%2E%2e/b']) {
      const res = await rawRequest('GET', `/zones/${a.agent.id}/app${path}`, bearer());
      expect(res.status, path).toBe(400);
    }
    expect(zone.requests).toHaveLength(0);
  });

  it('issue 12 finding 4: dot segments spelt with backslashes, %2e, %2f, %5c, double encoding or ;params are refused too (400, nothing forwarded)', async () => {
    const hostile = [
      '/..\\secret', '/a/..\\..\\secret', '/%2e%2e/secret', '/%2E%2e%2fsecret', '/%5c..%5csecret', '/a%2f..%2f..%2fsecret',
      '/..%5c..%5csecret', '/%252e%252e/secret', '/%25252e%25252e%25252fsecret', '/..;/secret', '/a/..;x/..;y/secret', '/.%2e/secret',
      '/%2e/x', '/\\..', 'x/../../secret',
    ];
    for (const path of hostile) {
      const res = await rawRequest('GET', `/zones/${a.agent.id}/app${path}`, bearer());
      expect([400, 404], path).toContain(res.status);
    }
    expect(zone.requests).toHaveLength(0);
  });

  it('issue 12: what is forwarded stays under zone_app_url, with dots that are not segments and encoded characters kept', async () => {
    for (const path of ['/a..b/c', '/...', '/a%2fb', '/file%5cname', '/%2e%2ehidden', '/v1.2/x']) {
      const res = await rawRequest('GET', `/zones/${a.agent.id}/app${path}`, bearer());
      expect(res.status, path).toBe(201);
    }
    expect(zone.requests.map((r) => r.url)).toEqual(['/base/a..b/c', '/base/...', '/base/a%2fb', '/base/file%5cname', '/base/%2e%2ehidden', '/base/v1.2/x']);
  });

  it('zones.md: an unreachable zone app is 502, with no internals', async () => {
    const down = await seedAgent(t, { orgId: a.orgId, zone_app_url: await unusedUrl() });
    const res = await get('/x', bearer(), down.agent.id);
    expect(res.status).toBe(502);
    expect(JSON.parse(res.text)).toMatchObject({ code: 'upstream_failed' });
    expect(res.text).not.toContain('127.0.0.1');
  });
});

describe('zones.md: bodies are streamed both ways', () => {
  it('zones.md: the request body reaches the zone app while the client is still sending it', async () => {
    const target = new URL(url('/upload'));
    const req = httpRequest({ host: target.hostname, port: target.port, path: target.pathname, method: 'POST', headers: { ...bearer(), 'content-type': 'application/octet-stream' } });
    const answer = new Promise<{ status: number; body: string }>((resolve, reject) => {
      req.on('response', (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString('utf8')));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      });
      req.on('error', reject);
    });
    req.write('chunk-one;');
    // The second chunk is only sent once the first has arrived upstream: a buffering proxy would never get there.
    const first = await withDeadline(zone.firstUploadChunk, 'first chunk never reached the zone app');
    expect(first).toBe('chunk-one;');
    req.end('chunk-two');
    const res = await answer;
    expect(res).toEqual({ status: 200, body: 'received 19 bytes' });
    expect(zone.requests[0]!.body).toBe('chunk-one;chunk-two');
  });

  it('zones.md: the response body reaches the user while the zone app is still writing it', async () => {
    const res = await request(url('/download'), { headers: bearer() });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-disposition']).toBe('attachment; filename="r.bin"');
    const iterator = res.body[Symbol.asyncIterator]();
    const first = await withDeadline(iterator.next(), 'first chunk never reached the user');
    expect(Buffer.from(first.value as Buffer).toString('utf8')).toBe('first-chunk;');
    zone.releaseDownload();
    let rest = '';
    for (let n = await iterator.next(); !n.done; n = await iterator.next()) rest += Buffer.from(n.value as Buffer).toString('utf8');
    expect(rest).toBe('second-chunk');
  });
});

/** node:http, so the path and headers go out exactly as written (no URL normalization, no header rules). */
function rawRequest(method: string, path: string, headers: Record<string, string>, body?: string): Promise<{ status: number; body: string }> {
  const target = new URL(base);
  return new Promise((resolve, reject) => {
    const req = httpRequest({ host: target.hostname, port: target.port, path, method, headers }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString('utf8')));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function withDeadline<T>(p: Promise<T>, message: string): Promise<T> {
  return Promise.race([p, new Promise<T>((_, reject) => setTimeout(() => reject(new Error(message)), 5_000).unref())]);
}
