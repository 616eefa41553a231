import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, type AgentOverrides } from '../helpers/fixtures.ts';
import { N8nFake, n8nAnswers, type N8nWorkflow } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { NO_ANSWER_REASON } from '../../src/sync/sync-wait.ts';
import { callback, expectError, permissiveLimiter, platformRunId, runCount, taskAgent, waitForRun, workflowAgent } from '../sync/sync-helpers.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;
const tokens: string[] = [];

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp({ limiter: permissiveLimiter });
});
afterAll(async () => {
  for (const token of tokens) for (const line of t.logs) expect(line).not.toContain(token);
  await n8n.stop();
  await trig.stop();
  await t.close();
});

async function hookAgent(workflow: N8nWorkflow, o: AgentOverrides = {}) {
  const a = await workflowAgent(t, n8n, workflow, { allow_webhook_triggers: true, ...o });
  tokens.push(a.webhookToken!);
  return a;
}

const waitUrl = (agentId: number, token: string) => `/api/agents/${agentId}/runs/webhook-and-wait/${token}`;

describe('spec 4.7 webhook-and-wait: responses', () => {
  it('spec 4.7: 200 is the agent output itself, not a run envelope', async () => {
    const a = await hookAgent(async (ctx) => ({ json: { echoed: (ctx.body as { input: { webhook: { body: unknown } } }).input.webhook.body, outputs: 2 } }));
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: { ping: 1 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.json()).toEqual({ echoed: { ping: 1 }, outputs: 2 });
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    const [run] = (await t.db.query<{ id: number }>('SELECT id FROM runs WHERE agent_id = $1', [a.agent.id])).rows;
    expect(await readRun(t, run!.id)).toMatchObject({ status: 'completed', outputs: 2, source: 'webhook_and_wait' });
  });

  it('spec 4.7: webhookResponse controls status, headers and body; a string body is text/plain', async () => {
    const a = await hookAgent({ json: { webhookResponse: { status: 201, headers: { 'x-reply': 'yes' }, body: 'challenge-accepted' } } });
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '' });
    expect(res.statusCode).toBe(201);
    expect(res.headers['x-reply']).toBe('yes');
    expect(res.headers['content-type']).toMatch(/^text\/plain/);
    expect(res.body).toBe('challenge-accepted');
  });

  // Issue 12 finding 1: the agent's own CSP used to replace the sandbox on the wire.
  it('issue 12: an HTML answer whose agent sets its own CSP (even "sandbox allow-same-origin") still carries the sandbox', async () => {
    const a = await hookAgent({
      json: {
        webhookResponse: {
          headers: { 'content-type': 'text/html', 'Content-Security-Policy': 'sandbox allow-scripts allow-same-origin', 'X-Content-Type-Options': 'off' },
          body: '<script>fetch("/zones/1/app/")</script>',
        },
      },
    });
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: {} });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toBe('text/html');
    const policies = ([] as string[]).concat(res.headers['content-security-policy'] as string | string[]).flatMap((h) => h.split(',')).map((p) => p.trim());
    expect(policies).toEqual(['sandbox', 'sandbox allow-scripts allow-same-origin']);
    expect(res.headers['x-content-type-options']).toBe('nosniff');
  });

  it('spec 4.7: a 5xx or 3xx status is never emitted; header injection attempts and forbidden headers are dropped', async () => {
    const a = await hookAgent({
      json: {
        webhookResponse: {
          status: 503,
          headers: {
            'x-ok': 'kept', 'x-bad': 'a\r\nset-cookie: pwned=1', 'bad name': 'v', 'x-tab-ok': 'a\tb', 'x-del': 'a\u007fb', 'set-cookie': 'sid=1',
            'content-length': '1', 'transfer-encoding': 'chunked', connection: 'close', 'x-num': 5,
          },
          body: { fine: true },
        },
      },
    });
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' });
    expect(res.statusCode).toBe(499);
    expect(res.headers['x-ok']).toBe('kept');
    for (const h of ['x-bad', 'bad name', 'x-del', 'set-cookie', 'x-num']) expect(res.headers[h]).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBeUndefined();
    expect(res.json()).toEqual({ fine: true });
    const redirect = await hookAgent({ json: { webhookResponse: { status: 302, headers: { location: 'https://evil.example' } } } });
    const r2 = await t.app.inject({ method: 'POST', url: waitUrl(redirect.agent.id, redirect.webhookToken!), payload: '{}' });
    expect(r2.statusCode).toBe(200);
  });

  it('spec 4.7: a failed run is 502 {error, runId}', async () => {
    const a = await hookAgent(n8nAnswers.errorInWorkflow());
    const body = expectError(await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 502, 'run_failed');
    expect(body.runId).toEqual(expect.any(Number));
    expect(body.error).toMatch(/Error in workflow/);
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'failed' });
  });

  it('spec 4.7: a cancelled run is 502 as well', async () => {
    const a = await hookAgent({ status: 500, json: { code: 0, message: 'The execution was cancelled manually' } });
    const body = expectError(await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 502, 'run_failed');
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'cancelled' });
  });

  it('spec 4.7 / 8.3: no response within min(running timeout, 5 min) is 504 {error, runId} and the run failed', async () => {
    const a = await hookAgent(n8nAnswers.never(), { running_timeout_ms: 300 });
    const body = expectError(await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 504, 'runtime_timeout');
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'failed', error: NO_ANSWER_REASON });
  });

  it('spec 4.7: a run that called back but did not finish in the window is 202 {runId, status:running, timedOut:true}', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = await hookAgent(async (ctx) => {
      await callback(t.app, a, platformRunId(ctx.body), { type: 'started' });
      await gate;
      return { json: { late: true } };
    }, { running_timeout_ms: 500 });
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ runId: expect.any(Number), status: 'running', timedOut: true });
    release();
    await waitForRun(t, res.json().runId, (r) => r.status === 'completed' || r.status === 'failed');
  });
});

describe('spec 4.7 webhook-and-wait: eligibility and limits', () => {
  it('spec 4.7 / part 7: a task runtime (no synchronous triggering) is 422 and nothing is started', async () => {
    const a = await taskAgent(t, trig, undefined, { allow_webhook_triggers: true });
    tokens.push(a.webhookToken!);
    expectError(await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 422, 'agent_unavailable');
    expect(await runCount(t, a.agent.id)).toBe(0);
    expect(trig.triggers()).toHaveLength(0);
  });

  it('spec part 7: 401 wrong token / unknown agent, 403 toggle off, 422 not active, 413 over 1 MiB', async () => {
    const a = await hookAgent({ json: {} });
    expectError(await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, 'nope'), payload: '{}' }), 401, 'unauthorized');
    expectError(await t.app.inject({ method: 'POST', url: waitUrl(987_654_321, a.webhookToken!), payload: '{}' }), 401, 'unauthorized');
    const big = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: Buffer.alloc(1_048_577), headers: { 'content-type': 'text/plain' } });
    expectError(big, 413, 'payload_too_large');
    const paused = await hookAgent({ json: {} }, { status: 'paused' });
    expectError(await t.app.inject({ method: 'POST', url: waitUrl(paused.agent.id, paused.webhookToken!), payload: '{}' }), 422, 'agent_unavailable');
    await t.db.query('UPDATE agents SET allow_webhook_triggers = false WHERE id = $1', [a.agent.id]);
    await t.ctx.agents.changed(a.agent.id);
    expectError(await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' }), 403, 'not_eligible');
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('issue 35 finding 2: the session cookie never reaches the runtime; the other cookies pass verbatim', async () => {
    const a = await hookAgent({ json: { ok: true } });
    const cookie = 'theme=dark; ars_session=ars_sess_secret0123456789; tracking=a=b';
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}', headers: { cookie } });
    expect(res.statusCode).toBe(200);
    const sent = n8n.webhookCalls(a.path)[0]!.body as { input: { webhook: { headers: Record<string, string> } } };
    expect(sent.input.webhook.headers.cookie).toBe('theme=dark; tracking=a=b');
    expect(JSON.stringify(sent)).not.toContain('ars_sess_secret0123456789');
    // Only the session cookie: no cookie header at all.
    const only = await hookAgent({ json: { ok: true } });
    await t.app.inject({ method: 'POST', url: waitUrl(only.agent.id, only.webhookToken!), payload: '{}', headers: { cookie: 'ars_session=ars_sess_other' } });
    const alone = n8n.webhookCalls(only.path)[0]!.body as { input: { webhook: { headers: Record<string, string> } } };
    expect(alone.input.webhook.headers).not.toHaveProperty('cookie');
  });

  it("issue 35: an agent's webhookResponse cannot send a header that acts for the whole origin (the zone proxy's list)", async () => {
    const originWide = {
      'set-cookie2': 'a=1', 'clear-site-data': '"cookies"', 'service-worker-allowed': '/', 'strict-transport-security': 'max-age=1',
      'alt-svc': 'h3=":443"', nel: '{}', 'report-to': '{}', 'reporting-endpoints': 'a="https://x"', 'www-authenticate': 'Basic',
      'access-control-allow-origin': '*', 'access-control-allow-credentials': 'true',
    };
    const a = await hookAgent({ json: { webhookResponse: { status: 200, headers: { ...originWide, 'x-kept': 'yes' }, body: 'ok' } } });
    const res = await t.app.inject({ method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: '{}' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['x-kept']).toBe('yes');
    for (const name of Object.keys(originWide)) expect(res.headers[name], name).toBeUndefined();
  });

  it('spec 4.7: the stored input is redacted exactly as for 4.6', async () => {
    const a = await hookAgent({ json: { ok: true } });
    const res = await t.app.inject({
      method: 'POST', url: waitUrl(a.agent.id, a.webhookToken!), payload: 'x',
      headers: { authorization: 'Bearer s3cret', cookie: 'a=b', 'x-api-key': 'k', 'stripe-signature': 't=1', 'x-trace': 'kept' },
    });
    expect(res.statusCode).toBe(200);
    const [row] = (await t.db.query<{ input: { webhook: { headers: Record<string, string> } } }>('SELECT input FROM runs WHERE agent_id = $1', [a.agent.id])).rows;
    expect(row!.input.webhook.headers).toMatchObject({ authorization: '[REDACTED]', cookie: '[REDACTED]', 'x-api-key': '[REDACTED]', 'stripe-signature': '[REDACTED]', 'x-trace': 'kept' });
    expect(row!.input.webhook).not.toHaveProperty('rawBody');
    const sent = n8n.webhookCalls(a.path)[0]!.body as { input: { webhook: { headers: Record<string, string> } } };
    expect(sent.input.webhook.headers.authorization).toBe('Bearer s3cret');
  });
});
