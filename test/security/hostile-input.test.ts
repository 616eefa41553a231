// Issue 12: the hostile-input catalogue. Every endpoint that stores or forwards a request body (hostile-endpoints.ts)
// gets the same list of values, and every cell is asserted: either a 4xx naming the problem with NOTHING written
// (the whole database is fingerprinted before and after), or — where the project deliberately stores the value —
// the documented way it is stored. Never a 5xx (decisions.md "Errors": bad input is a 4xx naming the field).
//
// The rules these cells follow (docs/decisions.md):
// - "JSON PostgreSQL cannot store" (lib/storable-json.ts): a body the caller sends is refused naming the field when
//   it nests deeper than 512 levels, holds a NUL or an unpaired surrogate, or a number outside the double range;
//   what a webhook sender or a runtime hands us is stored, rewritten (NUL made visible, a lone surrogate U+FFFD, a
//   number beyond the double range null) or, past 512 levels, not carried as the webhook `body`.
// - Numbers are read as JSON.parse reads them (IEEE doubles): 2^64 is stored as 18446744073709552000.
// - A runtime alert's ids key its receipt: a string that can be stored as sent, or (n8n) a safe integer.
// - Timestamps ("Input and slow clients"): RFC 3339 with an offset, from 0001-01-01 to 9999-12-31 UTC.
// - Ids are data: a path-like string is stored as sent, and made safe where it is used (runtime and zone URLs).
// - Bodies: the configured JSON maximum (ARS_MAX_JSON_BODY_BYTES), 1 MiB for webhooks (spec 8.4) and alerts.
import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser } from '../helpers/fixtures.ts';
import { zoneToken } from '../credentials/connections.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { permissiveLimiter, taskAgent, workflowAgent } from '../sync/sync-helpers.ts';
import { waitingRun } from '../runs/waitpoint-helpers.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { endpoints, type Endpoint, type Kind, type Prepared, type Slot, type Tenants } from './hostile-endpoints.ts';
import { fingerprint, settled } from './db-fingerprint.ts';

const DEEP = 100_000;
interface Hostile {
  name: string;
  kind: Kind;
  /** Raw JSON text: a hostile document cannot be built as an object first (JSON.stringify would overflow). */
  json: string;
}
const VALUES: Hostile[] = [
  { name: 'nesting 100,000 deep', kind: 'deep', json: `${'['.repeat(DEEP)}1${']'.repeat(DEEP)}` },
  { name: 'a lone surrogate \\ud800', kind: 'surrogate', json: '"a\\ud800b"' },
  { name: 'a NUL \\u0000', kind: 'nul', json: '"a\\u0000b"' },
  { name: 'the number 1e400', kind: 'huge', json: '1e400' },
  { name: 'the number 2^64', kind: 'bigint', json: '18446744073709551616' },
  { name: 'the date 0000-01-01T00:00:00Z', kind: 'date', json: '"0000-01-01T00:00:00Z"' },
  { name: 'the date +275760-09-13T00:00:00Z', kind: 'date', json: '"+275760-09-13T00:00:00Z"' },
  { name: 'the date 99999-01-01', kind: 'date', json: '"99999-01-01"' },
  // The edges RFC 3339's syntax lets through: years 0000 and 10000 once the offset is applied.
  { name: 'the date 0001-01-01T00:00:00+01:00', kind: 'date', json: '"0001-01-01T00:00:00+01:00"' },
  { name: 'the date 9999-12-31T23:59:59-01:00', kind: 'date', json: '"9999-12-31T23:59:59-01:00"' },
  ...['..', '.', 'a/b', '%2e%2e', 'a\\b'].map((id): Hostile => ({ name: `the id ${JSON.stringify(id)}`, kind: 'id', json: JSON.stringify(id) })),
];

type Outcome = { refuse: RegExp } | { store: unknown };
const DEPTH = /nests deeper than 512 levels/;
const SURROGATE = /unpaired UTF-16 surrogate/;
const NUL = /NUL character/;
const HUGE = /number too large/;
const NOT_STRING = /must be string/;

/** What the catalogue expects of one value in one slot (the rules in the header). */
function outcome(slot: Slot, h: Hostile): Outcome {
  const verbatim = { store: JSON.parse(h.json) as unknown };
  const refusedAnywhere = { deep: DEPTH, surrogate: SURROGATE, nul: NUL, huge: HUGE } as Partial<Record<Kind, RegExp>>;
  switch (slot) {
    case 'webhook': {
      // Stored as the sender sent it, rewritten only where PostgreSQL cannot hold it; the task gets it verbatim.
      const body = { deep: null, surrogate: { v: 'a\ufffdb' }, nul: { v: 'a\\u0000b' }, huge: { v: null } }[h.kind as 'deep'];
      return { store: body === undefined ? { v: JSON.parse(h.json) } : body };
    }
    case 'alert':
      // The runtime's execution id keys the receipt: a string or a safe integer that can be stored as sent.
      return h.kind === 'date' || h.kind === 'id' ? verbatim : { refuse: /execution\.id/ };
    case 'date':
      return { refuse: /body\.(startedAt|expires_at)/ };
    case 'uuid':
      return refusedAnywhere[h.kind] ? { refuse: refusedAnywhere[h.kind]! } : { refuse: h.kind === 'bigint' ? NOT_STRING : /body\.user_id must match format "uuid"/ };
    case 'url':
      return refusedAnywhere[h.kind] ? { refuse: refusedAnywhere[h.kind]! } : { refuse: h.kind === 'bigint' ? NOT_STRING : /body\.url/ };
    case 'string':
      return refusedAnywhere[h.kind] ? { refuse: refusedAnywhere[h.kind]! } : h.kind === 'bigint' ? { refuse: NOT_STRING } : verbatim;
    case 'id':
    case 'free':
      return refusedAnywhere[h.kind] ? { refuse: refusedAnywhere[h.kind]! } : verbatim;
  }
}

const n8n = new N8nFake();
const trig = new TriggerDevFake();
const JSON_LIMIT = 512 * 1024;
const x = {} as Tenants;
const ENDPOINTS = endpoints(x);
let t: TestApp;
let base: string;
/** A zone app served under a base path; it records the path of every request the proxy sends it. */
let zoneApp: Server;
const zoneAppSaw: string[] = [];
let memberToken: string;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  zoneApp = createServer((req, res) => {
    zoneAppSaw.push(req.url ?? '');
    res.writeHead(200, { 'content-type': 'text/plain' }).end('zone app');
  });
  await new Promise<void>((resolve) => zoneApp.listen(0, '127.0.0.1', resolve));
  t = await createTestApp({ limiter: permissiveLimiter, config: { maxJsonBodyBytes: JSON_LIMIT, outboundAllowHosts: ['127.0.0.1'] } });
  const orgId = await seedOrg(t);
  const userId = await seedUser(t, { orgId });
  const zoneAppUrl = `http://127.0.0.1:${(zoneApp.address() as AddressInfo).port}/zone-base/`;
  const task = await taskAgent(t, trig, undefined, { orgId, allow_webhook_triggers: true, zone_app_url: zoneAppUrl });
  const file = await workflowAgent(t, n8n, { binary: { contentType: 'application/pdf', size: 16, inMemory: true } }, { orgId, output_kind: 'file_download' });
  const alertSecret = 'alert-secret-0123456789abcdef0123456789';
  const hook = await workflowAgent(t, n8n, { json: { ok: true } }, {
    orgId, allow_webhook_triggers: true, runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey, alertSecret },
  });
  const standalone = await seedAgent(t, { orgId, managed_by: 'standalone' });
  Object.assign(x, {
    t, trig, task, file, hook: { ...hook, alertSecret }, standalone, orgId, userId,
    zone: { task: await zoneToken(t, task.agent, userId), file: await zoneToken(t, file.agent, userId) },
  });
  const issued = await t.app.inject({ method: 'POST', url: `/api/admin/users/${userId}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
  memberToken = (issued.json() as { token: string }).token;
  base = await t.app.listen({ port: 0, host: '127.0.0.1' }); // the zone proxy cells need raw request lines
}, 120_000);
afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => zoneApp?.close(resolve));
  await n8n.stop();
  await trig.stop();
});

function send(e: Endpoint, p: Prepared, body: string): Promise<LightMyRequestResponse> {
  return t.app.inject({ method: e.method, url: p.url, headers: p.headers, payload: body });
}

/** A refusal: the status, an error body naming the problem, and not one row written anywhere. */
async function expectRefused(e: Endpoint, body: string, status: number, code: string, problem: RegExp): Promise<void> {
  const p = await e.prepare();
  const before = await settled(t);
  const res = await send(e, p, body);
  expect(res.statusCode, res.body.slice(0, 300)).toBe(status);
  const error = res.json() as { error: string; code: string; requestId: string };
  expect(error).toMatchObject({ code, requestId: expect.any(String) });
  expect(error.error).toMatch(problem);
  expect(await fingerprint(t)).toEqual(before);
}

describe.each(ENDPOINTS.map((e) => [e.name, e] as const))('issue 12 hostile input: %s', (_name, e) => {
  it.each(VALUES.map((h) => [h.name, h] as const))('%s', async (_label, h) => {
    const slot = e.slot(h.kind);
    // Issue 12 finding 4: an externalRunId of `.` or `..` cannot be one path segment at the runtime.
    const dotId = /runs\/(register|ingest)$/.test(e.name) && h.kind === 'id' && ['.', '..'].includes(JSON.parse(h.json) as string);
    const want = dotId ? { refuse: /body\.externalRunId must not be "\." or "\.\."/ } : outcome(slot, h);
    const body = e.body(slot, h.json);
    if ('refuse' in want) return expectRefused(e, body, e.refusal[0], e.refusal[1], want.refuse);
    const p = await e.prepare();
    const res = await send(e, p, body);
    expect(res.statusCode, res.body.slice(0, 300)).toBe(e.accepted);
    expect(await p.readBack(res)).toEqual(want.store);
  });

  it('a body one byte over its limit is 413, and nothing is written', async () => {
    const limit = e.limit === 'mib' ? 1024 * 1024 : JSON_LIMIT;
    const template = e.body('free', '"#PAD#"');
    const body = template.replace('#PAD#', 'a'.repeat(limit + 1 - (Buffer.byteLength(template) - '#PAD#'.length)));
    expect(Buffer.byteLength(body)).toBe(limit + 1);
    await expectRefused(e, body, 413, 'payload_too_large', /too large/);
  });
});

// Path-like ids where ids travel in the path: every body route above, each id position. Whatever the value, the
// answer is a 4xx error body (an unknown id: 401 or 404 as the route says) and nothing is written.
const PATH_IDS = ['..', '.', 'a/b', '%2e%2e', 'a%5Cb', 'a\\b'];
describe('issue 12 hostile input: path-like ids in the URL', () => {
  const routes: Array<[string, 'POST' | 'PATCH', (id: string) => string, () => Record<string, string>, string]> = [
    ['trigger agentId', 'POST', (id) => `/api/agents/${id}/runs/trigger`, () => x.task.ingestAuth, '{}'],
    ['webhook agentId', 'POST', (id) => `/api/agents/${id}/runs/webhook/${x.task.webhookToken}`, () => ({}), '{}'],
    ['webhook token', 'POST', (id) => `/api/agents/${x.task.agent.id}/runs/webhook/${id}`, () => ({}), '{}'],
    ['callback runId', 'POST', (id) => `/api/runs/${id}/callback`, () => x.task.agentAuth, '{"type":"started"}'],
    ['waitpoint runId', 'POST', (id) => `/api/runs/${id}/waitpoint`, () => x.task.agentAuth, '{}'],
    ['alerts runtimeId', 'POST', (id) => `/api/runtimes/${id}/alerts`, () => ({ authorization: `Bearer ${x.hook.alertSecret}` }), '{"execution":{"id":"1"}}'],
    ['zone runs agentId', 'POST', (id) => `/api/zones/agents/${id}/runs`, () => ({ authorization: `Bearer ${x.zone.task}` }), '{}'],
    ['zone waitpoint runId', 'POST', (id) => `/api/zones/agents/${x.task.agent.id}/runs/${id}/waitpoint`, () => ({ authorization: `Bearer ${x.zone.task}` }), '{}'],
    ['admin agent id', 'PATCH', (id) => `/api/admin/agents/${id}`, () => ({ authorization: `Bearer ${ADMIN_TOKEN}` }), '{"name":"renamed"}'],
    ['admin connection id', 'PATCH', (id) => `/api/admin/connections/${id}`, () => ({ authorization: `Bearer ${ADMIN_TOKEN}` }), '{"active":false}'],
    ['admin runtime id', 'PATCH', (id) => `/api/admin/runtimes/${id}`, () => ({ authorization: `Bearer ${ADMIN_TOKEN}` }), '{"name":"renamed"}'],
  ];
  it.each(routes.flatMap(([name, method, url, headers, body]) => PATH_IDS.map((id) => [`${name} = ${JSON.stringify(id)}`, method, () => url(id), headers, body] as const)))(
    '%s',
    async (_label, method, url, headers, body) => {
      const before = await settled(t);
      const res = await t.app.inject({ method, url: url(), headers: { ...headers(), 'content-type': 'application/json' }, payload: body });
      expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
      expect(res.statusCode, res.body).toBeLessThan(500);
      expect(res.json()).toMatchObject({ error: expect.any(String), code: expect.any(String) });
      expect(await fingerprint(t)).toEqual(before);
    },
  );
});

// Ids stored as data are used later: as a path segment at the runtime, as a resume URL, as a zone app path. Each
// use must keep the id in its place (a 4xx or the id as one segment), and never answer 5xx.
describe('issue 12 hostile input: ids used later', () => {
  it('a waiting tokenId with a bad percent-escape: /waitpoint is 409 from the runtime, not a 500 (URIError)', async () => {
    const runId = await waitingRun(t, x.hook.agent.id, { tokenId: `${n8n.url}/webhook-waiting/%E0%A4%A` });
    const res = await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/waitpoint`, headers: { ...x.hook.agentAuth, 'content-type': 'application/json' }, payload: '{}' });
    expect(res.statusCode, res.body).toBe(409);
    expect(res.json()).toMatchObject({ code: 'waitpoint_unavailable', runId });
    const { rows } = await t.db.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
    expect(rows[0]!.status).toBe('waiting'); // the claim was undone: the run still waits for a real completion
  });

  // Spec 4.4: any 1-255 characters; the task runtime is then asked about it by id (polling).
  const runtimeIds: Array<[string, string | null]> = [['a/b', null], ['%2e%2e', null], ['a\\b', null]];
  // Issue 12 finding 4: `.` and `..` cannot be one path segment; /register refuses them, naming the field, writing nothing.
  for (const id of ['..', '.']) {
    it(`a registered externalRunId ${JSON.stringify(id)} is refused at the door (422 naming externalRunId), nothing written`, async () => {
      const before = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs');
      const reg = await t.app.inject({ method: 'POST', url: `/api/agents/${x.task.agent.id}/runs/register`, headers: { ...x.task.ingestAuth, 'content-type': 'application/json' }, payload: { externalRunId: id } });
      expect(reg.statusCode, reg.body).toBe(422); // /register's validation status (spec 4.4)
      expect(reg.body).toContain('externalRunId');
      expect((await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs')).rows[0]!.n).toBe(before.rows[0]!.n);
    });
  }
  const polled = async (id: string) => {
    const reg = await t.app.inject({ method: 'POST', url: `/api/agents/${x.task.agent.id}/runs/register`, headers: { ...x.task.ingestAuth, 'content-type': 'application/json' }, payload: { externalRunId: id } });
    expect(reg.statusCode, reg.body).toBe(201);
    // An id the runtime does not know ends its run 30 s after registration (issue 36 item 3), and /register answers
    // an earlier test's run of the same id: it is made pollable again, since only the request's path matters here.
    await t.db.query(
      "UPDATE runs SET status = 'running', error = NULL, completed_at = NULL, poll_lease_until = NULL, next_poll_at = now() - interval '1 second' WHERE id = $1",
      [(reg.json() as { runId: number }).runId],
    );
    const seen = trig.requests.length;
    await pollDueRuns(t.ctx);
    const asked = trig.requests.slice(seen).filter((r) => r.method === 'GET');
    // Other registered runs are due too (a registered run's first poll is due at once): every read stays one
    // segment under /api/v3/runs/, and this id's is its encoded self.
    for (const r of asked) expect(r.path).toMatch(/^\/api\/v3\/runs\/[^/]+$/);
    expect(asked.map((r) => r.path)).toContain(`/api/v3/runs/${encodeURIComponent(id)}`);
  };
  for (const [id, pending] of runtimeIds) {
    const name = `a registered externalRunId ${JSON.stringify(id)} reaches the runtime as one path segment`;
    if (pending) it.fails(`${name} (pending: ${pending})`, () => polled(id));
    else it(name, () => polled(id));
  }

  // zones.md proxy: the path after /app/ is the zone app's, under its base path; dot segments are refused.
  // A cell that fails only for the zone-proxy path finding (fixed on the runtime branch) is marked with it here.
  const ZONE_PENDING: string | null = null;
  const proxyPaths: Array<[string, string | null]> = ['..', '.', '%2e%2e', '%2E%2e', '.%2e', 'a/b', 'a\\b', '..\\admin', '..%5Cadmin', '%2e%2e%5cadmin'].map((p) => [p, ZONE_PENDING]);
  const proxied = async (segment: string) => {
    const seen = zoneAppSaw.length;
    const status = await new Promise<number>((resolve, reject) => {
      const req = httpRequest(`${base}/zones/${x.task.agent.id}/app/${segment}/secret`, { headers: { authorization: `Bearer ${memberToken}` } }, (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
      });
      req.on('error', reject);
      req.end();
    });
    expect(status).toBeLessThan(500);
    if (status >= 400) expect(zoneAppSaw.length).toBe(seen);
    else for (const path of zoneAppSaw.slice(seen)) expect(path).toMatch(/^\/zone-base\//);
  };
  for (const [segment, pending] of proxyPaths) {
    const name = `the zone proxy path segment ${JSON.stringify(segment)} is refused or stays under the zone app's base path`;
    if (pending) it.fails(`${name} (pending: ${pending})`, () => proxied(segment));
    else it(name, () => proxied(segment));
  }
});
