import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { request } from 'undici';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type AgentOverrides } from '../helpers/fixtures.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { expectError, permissiveLimiter, runCount, taskAgent, workflowAgent } from '../sync/sync-helpers.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp({ limiter: permissiveLimiter });
});
afterAll(async () => {
  // spec 4.6 / decisions.md: no webhook token in any log line, whatever the tests below did.
  for (const token of tokens) for (const line of t.logs) expect(line).not.toContain(token);
  await n8n.stop();
  await trig.stop();
  await t.close();
});

const tokens: string[] = [];
const MiB = 1_048_576;

async function hookAgent(o: AgentOverrides = {}) {
  const a = await taskAgent(t, trig, undefined, { allow_webhook_triggers: true, ...o });
  tokens.push(a.webhookToken!);
  return a;
}

const hookUrl = (agentId: number, token: string, query = '') => `/api/agents/${agentId}/runs/webhook/${token}${query}`;

/** The task payload the Trigger.dev fake received for platform run `runId`. */
function payloadOf(runId: number): { runId: number; input: { webhook: Record<string, unknown> } } {
  const trigger = trig.triggers().find((r) => (r.body as { payload?: { runId?: number } }).payload?.runId === runId);
  if (!trigger) throw new Error(`no trigger for run ${runId}`);
  return (trigger.body as { payload: { runId: number; input: { webhook: Record<string, unknown> } } }).payload;
}

describe('spec 4.6 webhook: forwarding', () => {
  it('spec 4.6: 202 {runId, status:queued}; the task input is {webhook} verbatim, with no merge of the default input', async () => {
    const a = await hookAgent({ default_input: { should: 'not appear' } });
    const res = await t.app.inject({
      method: 'POST',
      url: hookUrl(a.agent.id, a.webhookToken!, '?event=push&tag=a&tag=b'),
      headers: { 'content-type': 'application/json', authorization: 'Bearer caller-secret', 'x-hub-signature': 'sha256=abc', 'X-Custom': 'v' },
      payload: '{"hello":"world"}',
    });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ runId: expect.any(Number), status: 'queued' });
    const { runId } = res.json();
    const payload = payloadOf(runId);
    expect(Object.keys(payload.input)).toEqual(['webhook']);
    expect(payload.input.webhook).toMatchObject({
      method: 'POST',
      query: { event: 'push', tag: 'a,b' },
      headers: { authorization: 'Bearer caller-secret', 'x-hub-signature': 'sha256=abc', 'x-custom': 'v', 'content-type': 'application/json' },
      body: { hello: 'world' },
      rawBody: '{"hello":"world"}',
      rawBodyEncoding: 'utf8',
      receivedAt: expect.any(String),
    });
    const run = await readRun(t, runId);
    expect(run).toMatchObject({ source: 'webhook', created_by: null });
    const stored = (run!.input as { webhook: Record<string, unknown> }).webhook;
    expect(stored).not.toHaveProperty('rawBody');
    expect(stored.headers).toMatchObject({ authorization: '[REDACTED]', 'x-hub-signature': '[REDACTED]', 'x-custom': 'v' });
    expect(stored.body).toEqual({ hello: 'world' });
  });

  it('issue 35 finding 2: ars_session (set by this service) never reaches the task; other cookies pass verbatim', async () => {
    // A browser signed in to the console attaches its session cookie to any same-origin POST, /docs' "Try it out" too.
    const a = await hookAgent();
    const res = await t.app.inject({
      method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: '{}',
      headers: { 'content-type': 'application/json', cookie: 'ars_session=ars_sess_finding2secret; _ga=GA1.2.3; sid=xyz' },
    });
    expect(res.statusCode, res.body).toBe(202);
    const payload = payloadOf(res.json().runId);
    expect(payload.input.webhook.headers).toMatchObject({ cookie: '_ga=GA1.2.3; sid=xyz' });
    expect(JSON.stringify(payload)).not.toContain('ars_sess_finding2secret');
    const stored = (await readRun(t, res.json().runId))!.input as { webhook: { headers: Record<string, string> } };
    expect(stored.webhook.headers.cookie).toBe('[REDACTED]');
  });

  it('spec 4.6: a workflow runtime receives the same input, and PUT and PATCH are accepted too', async () => {
    const a = await workflowAgent(t, n8n, { json: { ok: 1 } }, { allow_webhook_triggers: true });
    tokens.push(a.webhookToken!);
    for (const method of ['POST', 'PUT', 'PATCH'] as const) {
      const res = await t.app.inject({ method, url: hookUrl(a.agent.id, a.webhookToken!), payload: 'plain text', headers: { 'content-type': 'text/plain' } });
      expect(res.statusCode, res.body).toBe(202);
    }
    const calls = n8n.webhookCalls(a.path);
    expect(calls.map((c) => (c.body as { input: { webhook: { method: string; body: unknown; rawBody: string } } }).input.webhook))
      .toEqual(['POST', 'PUT', 'PATCH'].map((method) => expect.objectContaining({ method, body: null, rawBody: 'plain text' })));
  });

  it('spec 4.6: GET, HEAD and DELETE do not start runs (not routed: 404 without the token in the body)', async () => {
    const a = await hookAgent();
    for (const method of ['GET', 'DELETE'] as const) {
      const res = await t.app.inject({ method, url: hookUrl(a.agent.id, a.webhookToken!) });
      expect(res.statusCode).toBe(404);
      expect(res.body).not.toContain(a.webhookToken!);
    }
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec 4.6: an empty body and a request without any body are accepted (body null, rawBody "")', async () => {
    const a = await hookAgent();
    for (const extra of [{}, { payload: '' }, { payload: '', headers: { 'content-type': 'application/json' } }]) {
      const res = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), ...extra });
      expect(res.statusCode, res.body).toBe(202);
      expect(payloadOf(res.json().runId).input.webhook).toMatchObject({ body: null, rawBody: '', rawBodyEncoding: 'utf8' });
    }
  });

  it('spec 4.6 / 8.4: exactly 1 MiB is accepted; one byte more is 413 and writes nothing', async () => {
    const a = await hookAgent();
    const ok = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: Buffer.alloc(MiB, 0x61), headers: { 'content-type': 'application/octet-stream' } });
    expect(ok.statusCode, ok.body).toBe(202);
    expect((payloadOf(ok.json().runId).input.webhook.rawBody as string).length).toBe(MiB);
    const before = await runCount(t, a.agent.id);
    const big = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: Buffer.alloc(MiB + 1, 0x61), headers: { 'content-type': 'application/json' } });
    const body = expectError(big, 413, 'payload_too_large');
    expect(JSON.stringify(body)).not.toContain(a.webhookToken!);
    expect(await runCount(t, a.agent.id)).toBe(before);
  });

  it('spec 4.6: invalid UTF-8 arrives as base64 with body null; binary bodies likewise', async () => {
    const a = await hookAgent();
    const invalid = Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d]);
    const binary = randomBytes(4096);
    binary[0] = 0xff; // never valid UTF-8
    for (const [bytes, type] of [[invalid, 'application/json'], [binary, 'application/octet-stream'], [binary, 'image/png']] as const) {
      const res = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: bytes, headers: { 'content-type': type } });
      expect(res.statusCode, res.body).toBe(202);
      const hook = payloadOf(res.json().runId).input.webhook;
      expect(hook).toMatchObject({ body: null, rawBodyEncoding: 'base64', rawBody: bytes.toString('base64') });
      const stored = ((await readRun(t, res.json().runId))!.input as { webhook: Record<string, unknown> }).webhook;
      expect(stored).toMatchObject({ body: null, rawBodyEncoding: 'base64' });
      expect(stored).not.toHaveProperty('rawBody');
    }
  });

  it('spec 4.6: invalid JSON with a JSON content type is accepted: body null, rawBody kept', async () => {
    const a = await hookAgent();
    const res = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: '{"a":', headers: { 'content-type': 'application/json' } });
    expect(res.statusCode, res.body).toBe(202);
    expect(payloadOf(res.json().runId).input.webhook).toMatchObject({ body: null, rawBody: '{"a":', rawBodyEncoding: 'utf8' });
  });

  it('spec 4.6: any content type is accepted, even a malformed one, and reaches the task verbatim', async () => {
    const a = await hookAgent();
    for (const type of ['', 'garbage', 'multipart/form-data; boundary=xyz', 'application/x-www-form-urlencoded', 'text/xml; charset=latin1']) {
      const res = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: 'a=1&b=2', headers: { 'content-type': type } });
      expect(res.statusCode, `${type}: ${res.body}`).toBe(202);
      expect((payloadOf(res.json().runId).input.webhook.headers as Record<string, string>)['content-type']).toBe(type);
    }
  });

  it('spec 4.6: 10,000 repeated query keys are comma-joined into one value', async () => {
    const a = await hookAgent();
    const query = `?${Array.from({ length: 10_000 }, (_, i) => `k=${i}`).join('&')}`;
    const res = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!, query), payload: '{}' });
    expect(res.statusCode, res.body).toBe(202);
    const { k } = payloadOf(res.json().runId).input.webhook.query as { k: string };
    expect(k.split(',')).toHaveLength(10_000);
    expect(k.startsWith('0,1,2,')).toBe(true);
  });

  it('spec 4.6: over a real socket, an oversized request line gets a 4xx from the HTTP layer, never a 5xx', async () => {
    const a = await hookAgent();
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const query = `?${Array.from({ length: 10_000 }, (_, i) => `k=${i}`).join('&')}`;
    const res = await request(`${base}${hookUrl(a.agent.id, a.webhookToken!, query)}`, { method: 'POST', body: '{}' });
    await res.body.dump();
    expect(res.statusCode === 202 || (res.statusCode >= 400 && res.statusCode < 500)).toBe(true);
  });

  it('spec part 7: runtime invocation failure is 500 with the run failed (a retrying sender redelivers)', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: await unusedUrl() }, allow_webhook_triggers: true });
    tokens.push(a.webhookToken!);
    const res = await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: '{}' });
    const body = expectError(res, 500, 'runtime_failed');
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'failed' });
    expect(res.body).not.toContain(a.webhookToken!);
  });
});

describe('spec 4.6 webhook: authentication and eligibility', () => {
  it('spec part 7: an unknown agent and a wrong token are the same 401; Authorization is never read', async () => {
    const a = await hookAgent();
    const other = await hookAgent();
    const attempts = [
      hookUrl(a.agent.id, 'wrong-token'),
      hookUrl(a.agent.id, other.webhookToken!),
      hookUrl(999_999_999, a.webhookToken!),
      hookUrl(0, a.webhookToken!),
      `/api/agents/abc/runs/webhook/${a.webhookToken!}`,
    ];
    const bodies = [];
    for (const u of attempts) {
      const res = await t.app.inject({ method: 'POST', url: u, headers: a.ingestAuth, payload: '{}' });
      const body = expectError(res, 401, 'unauthorized');
      bodies.push({ ...body, requestId: null });
      expect(res.body).not.toContain(a.webhookToken!);
      expect(res.body).not.toContain(other.webhookToken!);
    }
    expect(new Set(bodies.map((b) => JSON.stringify(b))).size).toBe(1);
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec part 7: 403 when webhook triggers are switched off (token kept), 401 when the agent never had one', async () => {
    const a = await hookAgent();
    await t.db.query('UPDATE agents SET allow_webhook_triggers = false WHERE id = $1', [a.agent.id]);
    await t.ctx.agents.changed(a.agent.id);
    expectError(await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 403, 'not_eligible');
    const never = await taskAgent(t, trig);
    expectError(await t.app.inject({ method: 'POST', url: hookUrl(never.agent.id, 'anything') }), 401, 'unauthorized');
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec part 7: 422 when the agent is not platform-managed or not active', async () => {
    for (const o of [{ managed_by: 'standalone' as const }, { status: 'paused' as const }, { status: 'archived' as const }]) {
      const a = await hookAgent(o);
      expectError(await t.app.inject({ method: 'POST', url: hookUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 422, 'agent_unavailable');
      expect(await runCount(t, a.agent.id)).toBe(0);
    }
  });

  it('spec 4.6: the token never reaches the stored run, even when a proxy header echoes the URL', async () => {
    const a = await hookAgent();
    const path = hookUrl(a.agent.id, a.webhookToken!);
    const res = await t.app.inject({
      method: 'POST', url: `${path}?ref=${a.webhookToken!}`, payload: JSON.stringify({ echo: path }),
      headers: { 'content-type': 'application/json', 'x-original-uri': path, 'x-forwarded-uri': path },
    });
    expect(res.statusCode).toBe(202);
    const run = await readRun(t, res.json().runId);
    expect(JSON.stringify(run)).not.toContain(a.webhookToken!);
    // The task still gets the request as sent (spec 4.6: headers verbatim).
    expect((payloadOf(res.json().runId).input.webhook.headers as Record<string, string>)['x-original-uri']).toBe(path);
  });
});
