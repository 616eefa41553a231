import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { createRuntimeRegistry } from '../../src/runtimes/runtime-registry.ts';
import { N8nAdapter } from '../../src/runtimes/n8n-adapter.ts';
import type { RuntimeAdapter } from '../../src/runtimes/runtime-adapter.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { randomUUID } from 'node:crypto';
import { auditFor, runState, waitingRun } from './waitpoint-helpers.ts';

/** A workflow runtime kind whose adapter has no waitpoints (a third-party kind, say). */
function withoutWaitpoints(): RuntimeAdapter {
  const real = new N8nAdapter();
  return new Proxy(real, { get: (target, prop) => (prop === 'supportsWaitpoints' ? false : Reflect.get(target, prop, target)) });
}

let t: TestApp;
let trigger: TriggerDevFake;
let n8n: N8nFake;
let taskAgent: SeededAgent;
let flowAgent: SeededAgent;

beforeAll(async () => {
  t = await createTestApp({ runtimes: createRuntimeRegistry({ adapters: { workflow: withoutWaitpoints() } }) });
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

const waitpoint = (runId: number | string, headers: Record<string, string>, payload: Record<string, unknown> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${runId}/waitpoint`, headers, payload });

async function expect409(res: Awaited<ReturnType<typeof waitpoint>>, runId: number) {
  expect(res.statusCode).toBe(409);
  expect(res.json()).toMatchObject({ code: 'waitpoint_unavailable', runId, requestId: res.headers['x-request-id'] });
  expect(await auditFor(t, runId)).toHaveLength(0);
}

describe('spec 4.9 / part 7: 409 waitpoint_unavailable', () => {
  it('spec part 7: the run is not waiting (running, queued, completed)', async () => {
    const token = trigger.createWaitpointToken();
    const now = t.ctx.clock.now();
    for (const status of ['running', 'queued'] as const) {
      const run = await insertRun(t.db, { agentId: taskAgent.agent.id, status, source: 'trigger', now });
      await expect409(await waitpoint(run.id, taskAgent.agentAuth), run.id);
    }
    const done = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });
    await transition(t.db, done, 'terminal', 'completed', now, { outputData: { a: 1 } }, { via: 'admin' });
    await expect409(await waitpoint(done, taskAgent.agentAuth), done);
    expect(token.completeCalls).toBe(0);
    expect(trigger.requestsTo('/api/v1/waitpoints/')).toHaveLength(0); // decided without asking the runtime
  });

  it('spec part 7: the run is waiting but has no pending token (e.g. an ingested waiting status)', async () => {
    const runId = await waitingRun(t, taskAgent.agent.id, null);
    await expect409(await waitpoint(runId, taskAgent.agentAuth), runId);
    expect((await runState(t, runId)).status).toBe('waiting');
  });

  it('spec part 7: the runtime does not support waitpoints', async () => {
    let resumed = false;
    const ex = n8n.createExecution({ status: 'waiting', resumeWaiter: () => (resumed = true) });
    const runId = await waitingRun(t, flowAgent.agent.id, { tokenId: n8n.resumeUrl(ex.id) });

    await expect409(await waitpoint(runId, flowAgent.agentAuth), runId);
    expect(resumed).toBe(false);
    expect(n8n.requests).toHaveLength(0);
    expect((await runState(t, runId)).status).toBe('waiting');
  });

  it('spec part 7: an agent without a runtime (standalone) has no waitpoints', async () => {
    const standalone = await seedAgent(t, { managed_by: 'standalone' });
    const runId = await waitingRun(t, standalone.agent.id, { tokenId: 'waitpoint_x' });
    await expect409(await waitpoint(runId, standalone.agentAuth), runId);
  });

  for (const status of ['COMPLETED', 'TIMED_OUT'] as const) {
    it(`spec part 7 / runtimes.md ⚠: a token already ${status} at Trigger.dev is refused without completing it`, async () => {
      const token = trigger.createWaitpointToken(status);
      const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });

      await expect409(await waitpoint(runId, taskAgent.agentAuth, { payload: { late: true } }), runId);
      expect(token.completeCalls).toBe(0); // the fake would have said {success:true} anyway
      expect(await runState(t, runId)).toMatchObject({ status: 'waiting', wait_state: { tokenId: token.id } });
    });
  }

  it('spec part 7: a token unknown to Trigger.dev (404) is a refusal', async () => {
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: 'waitpoint_doesnotexist' });
    await expect409(await waitpoint(runId, taskAgent.agentAuth), runId);
  });

  it('spec part 7: the runtime rejected the completion — the run stays waiting on its token, ready for a retry', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });
    trigger.setFault({ kind: 'garbage', status: 500, body: 'oops' }, { path: `/api/v1/waitpoints/tokens/${token.id}/complete`, times: 1 });

    await expect409(await waitpoint(runId, taskAgent.agentAuth), runId);
    expect(await runState(t, runId)).toMatchObject({ status: 'waiting', wait_state: { tokenId: token.id } });

    // The claim was undone, so the same call succeeds once the runtime recovers.
    const again = await waitpoint(runId, taskAgent.agentAuth, { payload: { second: true } });
    expect(again.statusCode).toBe(200);
    expect(token.data).toEqual({ second: true });
  });

  it('spec part 7: the task runtime unreachable → 409, run still waiting', async () => {
    const down = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9', apiKey: 'tr_dev_x' } });
    const runId = await waitingRun(t, down.agent.id, { tokenId: 'waitpoint_abc' });
    await expect409(await waitpoint(runId, down.agentAuth), runId);
    expect((await runState(t, runId)).status).toBe('waiting');
  });
});

describe('spec 4.9 / part 7: 401', () => {
  it('spec part 7: a missing or invalid agent key', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });
    for (const headers of [{}, { authorization: 'Bearer ars_agent_nope' }, taskAgent.ingestAuth, { authorization: `Basic ${taskAgent.agentKey}` }]) {
      const res = await waitpoint(runId, headers);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
    }
    expect(token.completeCalls).toBe(0);
  });

  it('spec part 7: "also returned when the run does not exist" (unknown id, malformed id)', async () => {
    for (const id of ['999999999', '0', 'abc', '-1', '1e3']) {
      const res = await waitpoint(id, taskAgent.agentAuth);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
    }
  });

  it('spec part 7: another agent\'s run is 401 too, and its token is left alone', async () => {
    const token = trigger.createWaitpointToken();
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: token.id });
    const other = await seedAgent(t, { orgId: taskAgent.orgId, runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey } });

    const res = await waitpoint(runId, other.agentAuth, { userId: randomUUID() });

    expect(res.statusCode).toBe(401);
    expect(token.completeCalls).toBe(0);
    expect((await runState(t, runId)).status).toBe('waiting');
  });
});
