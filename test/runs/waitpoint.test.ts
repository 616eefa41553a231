import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { auditFor, runState, waitingRun } from './waitpoint-helpers.ts';

let t: TestApp;
let trigger: TriggerDevFake;
let n8n: N8nFake;
let taskAgent: SeededAgent;
let flowAgent: SeededAgent;

beforeAll(async () => {
  t = await createTestApp();
  trigger = await new TriggerDevFake().start();
  n8n = await new N8nFake().start();
  taskAgent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey } });
  flowAgent = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey } });
});
afterAll(async () => {
  await t.close();
  await trigger.stop();
  await n8n.stop();
});

const waitpoint = (runId: number, agent: SeededAgent, payload?: unknown, headers: Record<string, string> = {}) =>
  t.app.inject({
    method: 'POST',
    url: `/api/runs/${runId}/waitpoint`,
    headers: { ...agent.agentAuth, ...headers },
    ...(payload === undefined ? {} : { payload: payload as string }),
  });

describe('spec 4.9 on the task runtime (Trigger.dev)', () => {
  it('spec 4.9: completes the stored token with the payload under `data`, and the run goes waiting → running', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

    const res = await waitpoint(runId, taskAgent, { payload: { approved: true, note: 'ok' } });

    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(token.status).toBe('COMPLETED');
    expect(token.data).toEqual({ approved: true, note: 'ok' });
    expect(token.completeCalls).toBe(1);
    const complete = trigger.requestsTo(`/api/v1/waitpoints/tokens/${token.id}/complete`, 'POST')[0]!;
    expect(complete.body).toEqual({ data: { approved: true, note: 'ok' } }); // the key is `data` (runtimes.md ⚠)
    expect(complete.headers['x-trigger-api-version']).toBe('2025-07-16');
    // Inspected first: Trigger.dev answers success even for finished tokens (runtimes.md ⚠).
    expect(trigger.requestsTo(`/api/v1/waitpoints/tokens/${token.id}`, 'GET')).toHaveLength(1);
    expect(await runState(t, runId)).toEqual({ status: 'running', wait_state: null });
  });

  it('spec 4.9 / part 6: the audit entry run.waitpoint_completed records a member userId', async () => {
    const member = await seedUser(t, { orgId: taskAgent.orgId });
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

    const res = await waitpoint(runId, taskAgent, { userId: member });

    expect(res.statusCode).toBe(200);
    expect(await auditFor(t, runId)).toEqual([
      { action: 'run.waitpoint_completed', actor_user_id: member, agent_id: taskAgent.agent.id, run_id: runId, details: { via: 'agent_key' } },
    ]);
  });

  it('spec 4.9: a platform admin userId is recorded too', async () => {
    const admin = await seedUser(t, { platformAdmin: true });
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

    expect((await waitpoint(runId, taskAgent, { userId: admin })).statusCode).toBe(200);
    expect((await auditFor(t, runId))[0]!.actor_user_id).toBe(admin);
  });

  it('spec 4.9: a userId that is not a member (or unknown, or not a uuid) is dropped silently', async () => {
    const outsider = await seedUser(t, { orgId: flowAgent.orgId }); // a member of another organization
    for (const userId of [outsider, '0b6f5c1e-8a43-4f0e-9d7e-2b8f5a6c9d10', 'not-a-uuid']) {
      const token = trigger.createWaitpointToken();
      const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

      const res = await waitpoint(runId, taskAgent, { userId });

      expect(res.statusCode).toBe(200);
      const audit = await auditFor(t, runId);
      expect(audit).toHaveLength(1);
      expect(audit[0]!.actor_user_id).toBeNull();
    }
  });

  it('spec 4.9: the token id comes from the stored wait state, never from the body', async () => {
    const stored = trigger.createWaitpointToken();
    const other = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: stored.id });

    const res = await waitpoint(runId, taskAgent, { tokenId: other.id, payload: { x: 1 } });

    expect(res.statusCode).toBe(200);
    expect(stored.status).toBe('COMPLETED');
    expect(other.status).toBe('WAITING');
    expect(other.completeCalls).toBe(0);
  });

  describe('spec 4.9: "an empty body is valid and completes the waitpoint with no payload"', () => {
    const variants: Array<[string, { payload?: string; headers?: Record<string, string> }]> = [
      ['no body and no content-type', {}],
      ['an empty JSON object', { payload: '{}', headers: { 'content-type': 'application/json' } }],
      ['content-type application/json with a zero-length body', { payload: '', headers: { 'content-type': 'application/json' } }],
      ['content-type application/json; charset=utf-8 with content-length 0', { payload: '', headers: { 'content-type': 'application/json; charset=utf-8', 'content-length': '0' } }],
      ['whitespace only, as JSON', { payload: ' \n', headers: { 'content-type': 'application/json' } }],
      ['`payload: null`', { payload: '{"payload":null}', headers: { 'content-type': 'application/json' } }],
    ];
    for (const [name, v] of variants) {
      it(`spec 4.9: ${name}`, async () => {
        const token = trigger.createWaitpointToken();
        const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

        const res = await t.app.inject({
          method: 'POST',
          url: `/api/runs/${runId}/waitpoint`,
          headers: { ...taskAgent.agentAuth, ...v.headers },
          ...(v.payload === undefined ? {} : { payload: v.payload }),
        });

        expect(res.statusCode).toBe(200);
        expect(res.json()).toEqual({ ok: true });
        expect(token.status).toBe('COMPLETED');
        expect(token.data ?? null).toBeNull();
        expect((await runState(t, runId)).status).toBe('running');
      });
    }
  });

  it('house rules: a payload that is not an object is a 400 naming the field, and nothing changes', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

    const res = await waitpoint(runId, taskAgent, { payload: 'yes' });

    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'invalid_body' });
    expect(res.json().error).toMatch(/payload/);
    expect(token.completeCalls).toBe(0);
    expect((await runState(t, runId)).status).toBe('waiting');
  });

  it('house rules: malformed JSON is a 400 and nothing changes', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

    const res = await waitpoint(runId, taskAgent, '{"payload": ', { 'content-type': 'application/json' });

    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_json');
    expect(token.completeCalls).toBe(0);
  });
});

describe('spec 4.9: the empty-body allowance stays on this endpoint', () => {
  it('house rules: a body with __proto__ is still refused by the stock JSON parser (400), nothing completed', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

    const res = await waitpoint(runId, taskAgent, '{"payload":{"__proto__":{"polluted":true}}}', { 'content-type': 'application/json' });

    expect(res.statusCode).toBe(400);
    expect(token.completeCalls).toBe(0);
  });

  it('spec 4.8: the sibling callback route keeps Fastify\'s own answer to an empty JSON body', async () => {
    const runId = await waitingRun(t, taskAgent.agent.id, null);
    const res = await t.app.inject({
      method: 'POST',
      url: `/api/runs/${runId}/callback`,
      headers: { ...taskAgent.agentAuth, 'content-type': 'application/json' },
      payload: '',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_json');
  });
});

describe('spec 4.9 on the workflow runtime (n8n)', () => {
  it('spec 4.9 / runtimes.md: POSTs the payload to the stored resume URL, and the run goes waiting → running', async () => {
    let resumedWith: unknown = 'not resumed';
    const ex = n8n.createExecution({ status: 'waiting', resumeWaiter: (body) => (resumedWith = body) });
    const runId = await waitingRun(t, flowAgent.agent.id, { tokenId: n8n.resumeUrl(ex.id) }, ex.id);

    const res = await waitpoint(runId, flowAgent, { payload: { approved: false } });

    expect(res.statusCode).toBe(200);
    expect(resumedWith).toEqual({ approved: false });
    expect(n8n.resumeCalls()).toHaveLength(1);
    expect(n8n.resumeCalls()[0]!.headers['x-n8n-api-key']).toBeUndefined(); // the API key never goes to a webhook
    expect(await runState(t, runId)).toEqual({ status: 'running', wait_state: null });
    expect(await auditFor(t, runId)).toHaveLength(1);
  });

  it('spec 4.9 / runtimes.md: a resume URL with a query (newer n8n signs it) is POSTed as is', async () => {
    let resumed = false;
    const ex = n8n.createExecution({ status: 'waiting', resumeWaiter: () => (resumed = true) });
    const tokenId = `${n8n.resumeUrl(ex.id)}?signature=abc123`;
    const runId = await waitingRun(t, flowAgent.agent.id, { tokenId }, ex.id);

    expect((await waitpoint(runId, flowAgent)).statusCode).toBe(200);
    expect(resumed).toBe(true);
    expect(n8n.resumeCalls().at(-1)!.query.get('signature')).toBe('abc123');
  });

  it('spec 4.9 / runtimes.md: a resume URL on another origin is never called → 409, run still waiting', async () => {
    const foreign = await new N8nFake().start();
    try {
      const ex = foreign.createExecution({ status: 'waiting', resumeWaiter: () => undefined });
      const runId = await waitingRun(t, flowAgent.agent.id, { tokenId: foreign.resumeUrl(ex.id) });

      const res = await waitpoint(runId, flowAgent, { payload: { a: 1 } });

      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'waitpoint_unavailable', runId });
      expect(foreign.requests).toHaveLength(0);
      expect((await runState(t, runId)).status).toBe('waiting');
      expect(await auditFor(t, runId)).toHaveLength(0);
    } finally {
      await foreign.stop();
    }
  });

  it('spec 4.9: an execution that already finished at n8n → 409 without a resume call', async () => {
    const ex = n8n.createExecution({ status: 'success' });
    const runId = await waitingRun(t, flowAgent.agent.id, { tokenId: n8n.resumeUrl(ex.id) });
    const before = n8n.resumeCalls().length;

    const res = await waitpoint(runId, flowAgent);

    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('waitpoint_unavailable');
    expect(n8n.resumeCalls()).toHaveLength(before);
  });
});
