// Spec 4.1 /trigger against real-HTTP fakes of both runtimes: payload shape (2.3), eligibility, attribution,
// input merge, runtime failures (500 + run failed) and the n8n held answer followed to its end.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { randomUUID } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake, TRIGGER_API_VERSION } from '../fakes/trigger-dev-fake.ts';
import { N8nFake, n8nAnswers } from '../fakes/n8n-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { verifyCredentialsToken } from '../../src/lib/jwt.ts';
import { credentialsSecretOf } from '../../src/agents/agent-tokens.ts';
import { triggerRun } from '../../src/runs/begin-run.ts';

let t: TestApp;
const trigger = new TriggerDevFake();
const n8n = new N8nFake();
const PUBLIC_URL = 'https://ars.example.test';

beforeAll(async () => {
  await Promise.all([trigger.start(), n8n.start()]);
  trigger.registerTask('my-target');
  t = await createTestApp({ config: { publicUrl: PUBLIC_URL } });
});
afterAll(async () => {
  await t.close();
  await Promise.all([trigger.stop(), n8n.stop()]);
});

const taskAgent = (o: Parameters<typeof seedAgent>[1] = {}) =>
  seedAgent(t, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey }, ...o });
const workflowAgent = (path: string, o: Parameters<typeof seedAgent>[1] = {}) =>
  seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: path, ...o });

function post(a: SeededAgent, body?: unknown) {
  return t.app.inject({
    method: 'POST',
    url: `/api/agents/${a.agent.id}/runs/trigger`,
    headers: a.ingestAuth,
    ...(body === undefined ? {} : { payload: body as object }),
  });
}

async function addConnection(agentId: number, integration: string): Promise<string> {
  const id = randomUUID();
  await t.db.query(`INSERT INTO connections (id, agent_id, integration_id, type, secret_enc) VALUES ($1, $2, $3, 'api_key', 'x')`, [id, agentId, integration]);
  await t.ctx.agents.changed(agentId); // as the admin API does: the connection map is cached per agent
  return id;
}

/** Waits for a held workflow answer to be applied (the test's own instance holds it). */
async function settled(runId: number): Promise<void> {
  await t.ctx.heldCalls.get(runId)?.settled;
}

describe('spec 4.1: trigger on a task runtime (Trigger.dev)', () => {
  it('spec 4.1/2.3: 201 {runId, status:queued}; payload {runId, input, connectionIds, credentialsToken, …}, never the agent key', async () => {
    const a = await taskAgent({ default_input: { lang: 'en', nested: { a: 1, b: 2 } } });
    const connId = await addConnection(a.agent.id, 'github');
    const res = await post(a, { input: { topic: 'x', nested: { b: 3 } } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ runId: expect.any(Number), status: 'queued' });

    const call = trigger.triggers().at(-1)!;
    expect(call.path).toBe('/api/v1/tasks/my-target/trigger');
    expect(call.headers['x-trigger-api-version']).toBe(TRIGGER_API_VERSION);
    expect(call.headers.authorization).toBe(`Bearer ${trigger.secretKey}`);
    const sent = call.body as { payload: Record<string, unknown>; options: Record<string, unknown> };
    // decisions.md "Recovering lost runs" and "Task payload" (issue 13 item 3): deploymentId, serviceUrl and
    // callbackUrl are our compatible additions to spec 2.3's payload.
    expect(Object.keys(sent.payload).sort()).toEqual(['callbackUrl', 'connectionIds', 'credentialsToken', 'deploymentId', 'input', 'runId', 'serviceUrl']);
    expect(sent.payload.runId).toBe(body.runId);
    expect(sent.payload.deploymentId).toBe(t.ctx.deploymentId);
    expect(sent.payload.serviceUrl).toBe(PUBLIC_URL);
    expect(sent.payload.callbackUrl).toBe(`${PUBLIC_URL}/api/runs/${body.runId}/callback`);
    expect(sent.payload.input).toEqual({ lang: 'en', topic: 'x', nested: { a: 1, b: 3 } });
    expect(sent.payload.connectionIds).toEqual({ github: { integrationId: 'github', connectionId: connId } });
    const key = `${t.ctx.deploymentId}:${body.runId}`;
    expect(sent.options).toMatchObject({ idempotencyKey: key, ttl: '10m', tags: [`ars_run:${key}`] });
    expect(call.rawBody).not.toContain(a.agentKey);
    expect(call.rawBody).not.toContain(a.ingestKey);

    const secret = credentialsSecretOf(t.ctx, a.agent);
    const verified = await verifyCredentialsToken(sent.payload.credentialsToken as string, secret, new Date());
    expect(verified).toEqual({ ok: true, agentId: a.agent.id, runId: body.runId });

    const run = await readRun(t, body.runId);
    const fakeRun = trigger.runs.get(run!.external_run_id as string);
    expect(fakeRun).toBeDefined();
    expect(run).toMatchObject({ status: 'queued', source: 'trigger', started_at: null });
    expect(run!.input).toEqual({ lang: 'en', topic: 'x', nested: { a: 1, b: 3 } });
    // First poll one interval after the trigger answer.
    expect((run!.next_poll_at as Date).getTime() - (run!.created_at as Date).getTime()).toBeGreaterThanOrEqual(59_000);
  });

  it('spec 4.1: no body at all — none, or an empty text/plain one — is a trigger with the saved default input', async () => {
    const a = await taskAgent({ default_input: { lang: 'en' } });
    for (const extra of [{}, { payload: '', headers: { ...a.ingestAuth, 'content-type': 'text/plain' } }]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, ...extra });
      expect(res.statusCode, res.body).toBe(201);
      expect((await readRun(t, res.json().runId))!.input).toEqual({ lang: 'en' });
    }
  });

  it('spec 2.3: an agent without active connections gets neither connectionIds nor credentialsToken', async () => {
    const a = await taskAgent();
    const res = await post(a);
    expect(res.statusCode).toBe(201);
    const sent = (trigger.triggers().at(-1)!.body as { payload: Record<string, unknown> }).payload;
    expect(Object.keys(sent).sort()).toEqual(['callbackUrl', 'deploymentId', 'input', 'runId', 'serviceUrl']);
    expect(sent.input).toEqual({});
  });

  it('spec 4.1: the input merge cannot be polluted through __proto__ or constructor', async () => {
    const a = await taskAgent({ default_input: { keep: true } });
    const raw = '{"input":{"__proto__":{"polluted":1},"constructor":{"prototype":{"polluted":1}},"ok":1}}';
    const res = await t.app.inject({
      method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`,
      headers: { ...a.ingestAuth, 'content-type': 'application/json' }, payload: raw,
    });
    // Fastify's JSON parser refuses __proto__ outright; either way nothing is polluted.
    if (res.statusCode === 201) {
      const run = await readRun(t, res.json().runId);
      expect(run!.input).toEqual({ keep: true, ok: 1 });
    } else {
      expect(res.statusCode).toBe(400);
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    const res2 = await post(a, { input: { constructor: { prototype: { polluted: 1 } }, ok: 2 } });
    expect([201, 400]).toContain(res2.statusCode);
    // Past the parser (another transport, a zone proxy), the merge itself drops the keys.
    const result = await triggerRun(t.ctx, 'trigger', { agent: a.agent, ...(JSON.parse(raw) as { input: object }) });
    if (!('ok' in result) || !result.ok) throw new Error('the run did not start');
    expect((await readRun(t, result.run.id))!.input).toEqual({ keep: true, ok: 1 });
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype).not.toHaveProperty('polluted');
  });

  it('spec 4.1: userId of a member sets created_by; unknown, non-member and malformed values are dropped', async () => {
    const a = await taskAgent();
    const member = await seedUser(t, { orgId: a.orgId });
    const outsider = await seedUser(t);
    const cases: Array<[unknown, string | null]> = [[member, member], [outsider, null], [randomUUID(), null], ['not-a-uuid', null]];
    for (const [userId, expected] of cases) {
      const res = await post(a, { userId });
      expect(res.statusCode).toBe(201);
      expect((await readRun(t, res.json().runId))!.created_by).toBe(expected);
    }
  });

  it('spec 4.1: ineligible agents get 403 and nothing is written', async () => {
    const before = trigger.triggers().length;
    for (const o of [{ managed_by: 'standalone' as const }, { status: 'paused' as const }, { allow_external_triggers: false }]) {
      const a = await taskAgent(o);
      const res = await post(a, {});
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe('not_eligible');
      const { rows } = await t.db.query('SELECT 1 FROM runs WHERE agent_id = $1', [a.agent.id]);
      expect(rows).toHaveLength(0);
    }
    expect(trigger.triggers().length).toBe(before);
  });

  it('spec 4.1: bad ingest key 401; input that is not an object 400 naming the field', async () => {
    const a = await taskAgent();
    const bad = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: { authorization: 'Bearer nope' }, payload: {} });
    expect(bad.statusCode).toBe(401);
    const res = await post(a, { input: 'text' });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('input');
  });

  it('spec part 7: runtime unreachable → 500 runtime_failed with runId, and the run failed with the reason', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'task', baseUrl: await unusedUrl(), apiKey: 'tr_dev_x' } });
    const res = await post(a, {});
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(body).toMatchObject({ code: 'runtime_failed', runId: expect.any(Number), requestId: expect.any(String) });
    expect(body.error).toContain('runtime unreachable');
    const run = await readRun(t, body.runId);
    expect(run).toMatchObject({ status: 'failed' });
    expect(run!.error).toMatch(/^runtime unreachable: Trigger\.dev trigger: cannot connect/);
    expect(run!.completed_at).not.toBeNull();
  });

  it('spec part 7: runtime refusing (404 task not found, 401 bad key) → 500 and the run failed; a 5xx is repeated with the key (issue 36 item 2)', async () => {
    const cases: Array<[Parameters<typeof seedAgent>[1], RegExp]> = [
      [{ target: 'no-such-task' }, /runtime refused the run: .*Task not found/],
      [{ runtime: { kind: 'task', baseUrl: trigger.url, apiKey: 'tr_dev_wrong' } }, /refused the secret key/],
    ];
    for (const [o, reason] of cases) {
      const res = await post(await taskAgent(o), {});
      expect(res.statusCode).toBe(500);
      const run = await readRun(t, res.json().runId);
      expect(run!.status).toBe('failed');
      expect(run!.error).toMatch(reason);
    }
    // A 5xx may come from a proxy after Trigger.dev created the run: the trigger is repeated with its idempotency
    // key, and the one run it names is recorded.
    trigger.setFault({ kind: 'garbage', status: 503, contentType: 'application/json', body: '{"error":"overloaded"}' }, { path: '/api/v1/tasks', times: 1 });
    const res = await post(await taskAgent(), {});
    expect(res.statusCode).toBe(201);
    const run = (await readRun(t, res.json().runId))!;
    expect(run.status).toBe('queued');
    expect(trigger.runsTagged(`ars_run:${t.ctx.deploymentId}:${run.id}`).map((r) => r.id)).toEqual([run.external_run_id]);
  });
});

describe('spec 4.1: trigger on a workflow runtime (n8n), followed through the held answer', () => {
  it('spec 2.3/3: posts the payload to the webhook; run queued until the answer, then completed with outputs', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    n8n.registerWorkflow('wf-ok', async () => {
      await gate;
      return { json: { summary: 'done', outputs: 4 }, executionIdHeader: true };
    });
    const a = await workflowAgent('wf-ok', { default_input: { d: 1 } });
    const res = await post(a, { input: { q: 'hi' } });
    expect(res.statusCode).toBe(201);
    const { runId } = res.json();
    const call = n8n.webhookCalls('wf-ok').at(-1)!;
    // issue 13 item 3: the n8n request body carries the service's URLs too.
    expect(call.body).toEqual({
      runId, deploymentId: t.ctx.deploymentId, serviceUrl: PUBLIC_URL, callbackUrl: `${PUBLIC_URL}/api/runs/${runId}/callback`, input: { d: 1, q: 'hi' },
    });
    expect(call.rawBody).not.toContain(a.agentKey);
    expect(call.headers['x-n8n-api-key']).toBeUndefined();
    expect((await readRun(t, runId))!.status).toBe('queued');

    release();
    await settled(runId);
    const run = await readRun(t, runId);
    expect(run).toMatchObject({ status: 'completed', outputs: 4, output_data: { summary: 'done', outputs: 4 } });
    const execution = [...n8n.executions.values()].find((e) => e.workflowPath === 'wf-ok')!;
    expect(run!.external_run_id).toBe(execution.id);
    expect(run!.duration_ms).toEqual(expect.any(Number));
  });

  it('runtimes.md: an empty 200 answer is a failed run, not a success', async () => {
    n8n.registerWorkflow('wf-empty', { ...n8nAnswers.emptyOk(), delayMs: 300 });
    const a = await workflowAgent('wf-empty');
    const res = await post(a, {});
    expect(res.statusCode).toBe(201);
    await settled(res.json().runId);
    const run = await readRun(t, res.json().runId);
    expect(run!.status).toBe('failed');
    expect(run!.error).toMatch(/empty body/);
  });

  it('runtimes.md: 500 "Error in workflow" after the call was accepted fails the run (the trigger itself succeeded)', async () => {
    n8n.registerWorkflow('wf-500', { ...n8nAnswers.errorInWorkflow(), delayMs: 300 });
    const res = await post(await workflowAgent('wf-500'), {});
    expect(res.statusCode).toBe(201);
    await settled(res.json().runId);
    expect(await readRun(t, res.json().runId)).toMatchObject({ status: 'failed', error: 'Error in workflow' });
  });

  it('spec part 7: an unregistered webhook path is the runtime refusing → 500 and the run failed', async () => {
    const res = await post(await workflowAgent('wf-missing'), {});
    expect(res.statusCode).toBe(500);
    const run = await readRun(t, res.json().runId);
    expect(run!.status).toBe('failed');
    expect(run!.error).toMatch(/^runtime refused the run: n8n webhook: .*not registered/);
  });

  it('spec part 7: an unreachable workflow runtime → 500 and the run failed', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: await unusedUrl(), apiKey: null }, target: 'x' });
    const res = await post(a, {});
    expect(res.statusCode).toBe(500);
    expect((await readRun(t, res.json().runId))!.error).toMatch(/^runtime unreachable: n8n webhook/);
  });
});
