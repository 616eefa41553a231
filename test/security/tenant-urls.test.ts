// Issue 35 finding 1: every URL a tenant sets is fetched through the SSRF guard. An org admin may create and edit
// the organization's agents, and zone_app_url is an agent field; a webhook action's url and an OAuth token_url are
// the tenant's too. Each is refused at write time (400 naming the field) when it reaches a loopback, private,
// link-local or metadata address, and the zone proxy checks again when it connects (a name that resolves elsewhere
// later, or a row written before this check, still never reaches an internal address). docs/security.md "Roles".
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { createZoneProxyClient } from '../../src/zones/zone-proxy-client.ts';

let t: TestApp;
let orgId: string;
let agent: SeededAgent;
let orgAdminToken: string;
let memberToken: string;
let servicePort: number;

async function personal(userId: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/api/admin/users/${userId}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
  return res.json().token;
}

beforeAll(async () => {
  // The production default: nothing on ARS_OUTBOUND_ALLOW_HOSTS.
  t = await createTestApp({ config: { outboundAllowHosts: [] } });
  await t.app.listen({ port: 0, host: '127.0.0.1' });
  servicePort = (t.app.server.address() as AddressInfo).port;
  orgId = await seedOrg(t);
  agent = await seedAgent(t, { orgId, managed_by: 'standalone' });
  orgAdminToken = await personal(await seedUser(t, { orgId, role: 'admin' }));
  memberToken = await personal(await seedUser(t, { orgId }));
});
afterAll(async () => {
  await t?.close();
});

const as = (token: string, method: 'POST' | 'PATCH', url: string, payload: object) =>
  t.app.inject({ method, url: `/api/admin${url}`, headers: { authorization: `Bearer ${token}` }, payload });

/** The addresses the finding used, and their neighbours: each must be refused. */
const INTERNAL = (port: number) => [
  'http://169.254.169.254/latest/',
  `http://127.0.0.1:${port}/`,
  `http://localhost:${port}/`, // a name, resolved at write time
  'http://10.0.0.7/',
  'http://[::1]/',
  'http://[::ffff:127.0.0.1]/',
  'http://0.0.0.0/',
];

function expectRefused(res: { statusCode: number; json(): unknown; body: string }, field: string): void {
  expect(res.statusCode, res.body).toBe(400);
  expect(res.json()).toMatchObject({ code: 'invalid_body', error: expect.stringContaining(`body.${field} must not reach a loopback, private, link-local`) });
}

describe('issue 35 finding 1: tenant-set URLs are checked by the SSRF guard when written', () => {
  it('an org admin cannot create an agent whose zone app is an internal address (400, nothing written)', async () => {
    const before = await countRows(t, 'agents');
    for (const url of INTERNAL(servicePort)) {
      expectRefused(await as(orgAdminToken, 'POST', '/agents', { org_id: orgId, name: 'z', managed_by: 'standalone', zone_app_url: url }), 'zone_app_url');
    }
    expect(await countRows(t, 'agents')).toBe(before);
  });

  it('nor point an existing agent at one (400, the agent unchanged); the platform admin is held to the same rule', async () => {
    for (const token of [orgAdminToken, ADMIN_TOKEN]) {
      for (const url of INTERNAL(servicePort)) expectRefused(await as(token, 'PATCH', `/agents/${agent.agent.id}`, { zone_app_url: url }), 'zone_app_url');
    }
    const row = await t.db.query<{ zone_app_url: string | null }>('SELECT zone_app_url FROM agents WHERE id = $1', [agent.agent.id]);
    expect(row.rows[0]!.zone_app_url).toBeNull();
  });

  it('a public address, or a name that does not resolve yet, is accepted (the fetch-time guard still holds)', async () => {
    const res = await as(orgAdminToken, 'PATCH', `/agents/${agent.agent.id}`, { zone_app_url: 'https://93.184.215.14/app' });
    expect(res.statusCode, res.body).toBe(200);
    const later = await as(orgAdminToken, 'PATCH', `/agents/${agent.agent.id}`, { zone_app_url: 'https://zone.example.test/app' });
    expect(later.statusCode, later.body).toBe(200);
    await as(orgAdminToken, 'PATCH', `/agents/${agent.agent.id}`, { zone_app_url: null as unknown as string });
  });

  it('a webhook action url and an OAuth token_url are refused the same way', async () => {
    const before = [await countRows(t, 'webhook_actions'), await countRows(t, 'connections')];
    for (const url of INTERNAL(servicePort)) {
      expectRefused(await as(orgAdminToken, 'POST', `/agents/${agent.agent.id}/webhook-actions`, { on_state: 'completed', url }), 'url');
      const oauth = { integration_id: `i-${Math.random().toString(36).slice(2)}`, type: 'oauth', access_token: 'a', token_url: url.replace('http:', 'https:') };
      expectRefused(await as(orgAdminToken, 'POST', `/agents/${agent.agent.id}/connections`, oauth), 'token_url');
    }
    expect([await countRows(t, 'webhook_actions'), await countRows(t, 'connections')]).toEqual(before);
  });

  it('a member may set none of them (403 before any lookup)', async () => {
    const res = await as(memberToken, 'PATCH', `/agents/${agent.agent.id}`, { zone_app_url: 'https://zone.example.test/' });
    expect(res.statusCode).toBe(403);
  });

  it('an operator exception on ARS_OUTBOUND_ALLOW_HOSTS is accepted', async () => {
    const allowing = await createTestApp({ config: { outboundAllowHosts: ['127.0.0.1'] } });
    try {
      const org = await seedOrg(allowing);
      const res = await allowing.app.inject({
        method: 'POST', url: '/api/admin/agents', headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
        payload: { org_id: org, name: 'local', managed_by: 'standalone', zone_app_url: 'http://127.0.0.1:4000/' },
      });
      expect(res.statusCode, res.body).toBe(201);
    } finally {
      await allowing.close();
    }
  });
});

describe('issue 35 finding 1: the zone proxy connects only through the guard', () => {
  it("a zone app row at the service's own loopback (written before the check, or by DNS later) answers 502, never the service's metrics", async () => {
    const inside = await seedAgent(t, { orgId, zone_app_url: `http://127.0.0.1:${servicePort}/` });
    const res = await fetch(`http://127.0.0.1:${servicePort}/zones/${inside.agent.id}/app/metrics`, { headers: { authorization: `Bearer ${memberToken}` } });
    const body = await res.text();
    expect(res.status, body).toBe(502);
    expect(JSON.parse(body)).toMatchObject({ code: 'upstream_failed', error: expect.stringContaining('not allowed') });
    expect(body).not.toContain('ars_');
  });

  it('DNS rebinding: a name resolving to loopback when the proxy connects is refused at the socket', async () => {
    const zone = http.createServer((_req, res) => res.end('internal'));
    await new Promise<void>((resolve) => zone.listen(0, '127.0.0.1', resolve));
    const port = (zone.address() as AddressInfo).port;
    const client = createZoneProxyClient({ allowHosts: [], maxResponseBytes: 1024, resolve: async () => [{ address: '127.0.0.1', family: 4 }] });
    try {
      const exchange = await client.send(new URL(`http://zone.rebinding.test:${port}/`), { method: 'GET', headers: {}, body: null, signal: AbortSignal.timeout(5_000) });
      expect(exchange).toMatchObject({ ok: false, reason: 'blocked', code: 'ARS_OUTBOUND_BLOCKED' });
    } finally {
      await client.close();
      zone.close();
    }
  });

  it('an answer larger than ARS_ZONE_MAX_RESPONSE_BYTES is refused when announced (502) and cut when streamed', async () => {
    const size = 4096;
    const zone = http.createServer((req, res) => {
      if (req.url === '/announced') return void res.writeHead(200, { 'content-length': String(size) }).end('x'.repeat(size));
      // Chunked, no length to check first: a first small piece (the headers go out with it), then the rest.
      res.writeHead(200, { 'content-type': 'text/plain' });
      res.write('x'.repeat(512));
      setTimeout(() => res.end('x'.repeat(size)), 100);
    });
    await new Promise<void>((resolve) => zone.listen(0, '127.0.0.1', resolve));
    const capped = await createTestApp({ config: { outboundAllowHosts: ['127.0.0.1'], zoneMaxResponseBytes: 1024 } });
    try {
      const org = await seedOrg(capped);
      const a = await seedAgent(capped, { orgId: org, zone_app_url: `http://127.0.0.1:${(zone.address() as AddressInfo).port}/` });
      const token = await (async () => {
        const res = await capped.app.inject({ method: 'POST', url: `/api/admin/users/${await seedUser(capped, { orgId: org })}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
        return res.json().token as string;
      })();
      await capped.app.listen({ port: 0, host: '127.0.0.1' });
      const base = `http://127.0.0.1:${(capped.app.server.address() as AddressInfo).port}/zones/${a.agent.id}/app`;
      const announced = await fetch(`${base}/announced`, { headers: { authorization: `Bearer ${token}` } });
      expect(announced.status).toBe(502);
      expect(await announced.json()).toMatchObject({ code: 'upstream_failed', error: expect.stringContaining('ARS_ZONE_MAX_RESPONSE_BYTES') });
      const streamed = await fetch(`${base}/streamed`, { headers: { authorization: `Bearer ${token}` } });
      expect(streamed.status).toBe(200); // the headers were on their way before the size was known
      const read = await streamed.text().then((text) => text.length, () => -1);
      expect(read).toBeLessThan(size); // cut: never the whole answer
    } finally {
      await capped.close();
      zone.close();
    }
  });
});
