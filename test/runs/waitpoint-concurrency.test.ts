import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { auditFor, GatedTriggerDevFake, runState } from './waitpoint-helpers.ts';

// Mid-minute, so the fixed one-minute rate-limit bucket (spec 8.1) cannot roll over during a test.
const clock = new ManualClock(new Date('2026-03-02T10:00:20Z'));
let t: TestApp;
let trigger: GatedTriggerDevFake;
let n8n: N8nFake;

beforeAll(async () => {
  t = await createTestApp({ clock });
  trigger = await new GatedTriggerDevFake().start();
  n8n = await new N8nFake().start();
});
afterAll(async () => {
  await t.close();
  await trigger.stop();
  await n8n.stop();
});

/** A fresh agent per test: the shared rate-limit bucket (20/min per agent) stays out of the way. */
const taskAgent = () => seedAgent(t, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey } });

const post = (agent: SeededAgent, path: string, payload: Record<string, unknown> = {}) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${path}`, headers: agent.agentAuth, payload });

/** Into `waiting` through the real callback (spec 4.8), as a task would. */
async function waitingViaCallback(agent: SeededAgent, tokenId: string): Promise<number> {
  const run = await insertRun(t.db, { agentId: agent.agent.id, status: 'running', source: 'trigger', now: clock.now(), startedAt: clock.now() });
  const res = await post(agent, `${run.id}/callback`, { type: 'waiting', tokenId, description: 'Approve?' });
  expect(res.statusCode).toBe(200);
  return run.id;
}

describe('spec 4.9: concurrent completions', () => {
  it('spec 4.9: two simultaneous waitpoint calls for one run → exactly one 200, one 409, one completion at the runtime', async () => {
    const agent = await taskAgent();
    const token = trigger.createWaitpointToken();
    const runId = await waitingViaCallback(agent, token.id);

    trigger.holdInspections();
    const first = post(agent, `${runId}/waitpoint`, { payload: { from: 'first' } });
    const second = post(agent, `${runId}/waitpoint`, { payload: { from: 'second' } });
    await trigger.held(2); // both have passed every check and both saw the token WAITING
    trigger.release();
    const answers = await Promise.all([first, second]);

    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(answers.find((r) => r.statusCode === 409)!.json().code).toBe('waitpoint_unavailable');
    expect(token.completeCalls).toBe(1);
    expect(await auditFor(t, runId)).toHaveLength(1);
    expect((await runState(t, runId)).status).toBe('running');
  });

  it('spec 4.9: two simultaneous calls on n8n → the resume URL is POSTed once', async () => {
    const agent = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey } });
    // An execution of the agent's own workflow: the run has no execution id, so the workflow is what is checked.
    const ex = n8n.createExecution({ status: 'waiting', workflowPath: agent.agent.target!, resumeWaiter: () => undefined });
    const runId = await waitingViaCallback(agent, n8n.resumeUrl(ex.id));

    const answers = await Promise.all([post(agent, `${runId}/waitpoint`), post(agent, `${runId}/waitpoint`), post(agent, `${runId}/waitpoint`)]);

    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409, 409]);
    expect(n8n.resumeCalls().filter((r) => r.path === `/webhook-waiting/${ex.id}`)).toHaveLength(1);
  });

  it('spec 4.9 / part 3: the run completed while the waitpoint call was in flight → 409, token left alone', async () => {
    const agent = await taskAgent();
    const token = trigger.createWaitpointToken();
    const runId = await waitingViaCallback(agent, token.id);

    trigger.holdInspections();
    const pending = post(agent, `${runId}/waitpoint`);
    await trigger.held(1);
    const done = await post(agent, `${runId}/callback`, { type: 'output', complete: true, output: { ok: 1 } });
    expect(done.statusCode).toBe(200);
    trigger.release();
    const res = await pending;

    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('waitpoint_unavailable');
    expect(token.completeCalls).toBe(0);
    expect((await runState(t, runId)).status).toBe('completed');
  });

  it('spec 4.9 / part 3: a new `waiting` token reported while a call was in flight is not the one completed', async () => {
    const agent = await taskAgent();
    const oldToken = trigger.createWaitpointToken();
    const newToken = trigger.createWaitpointToken();
    const runId = await waitingViaCallback(agent, oldToken.id);

    trigger.holdInspections();
    const pending = post(agent, `${runId}/waitpoint`);
    await trigger.held(1);
    expect((await post(agent, `${runId}/callback`, { type: 'waiting', tokenId: newToken.id, description: 'again' })).statusCode).toBe(200);
    trigger.release();

    expect((await pending).statusCode).toBe(409);
    expect(oldToken.completeCalls + newToken.completeCalls).toBe(0);
    expect(await runState(t, runId)).toMatchObject({ status: 'waiting', wait_state: { tokenId: newToken.id } });
  });

  it('spec 4.9: a completion whose answer was lost but which the runtime applied counts as done (re-inspected)', async () => {
    const agent = await taskAgent();
    const token = trigger.createWaitpointToken();
    const runId = await waitingViaCallback(agent, token.id);
    trigger.dropCompleteAnswers = true;
    try {
      const res = await post(agent, `${runId}/waitpoint`, { payload: { ok: true } });
      expect(res.statusCode).toBe(200);
    } finally {
      trigger.dropCompleteAnswers = false;
    }
    expect(token).toMatchObject({ status: 'COMPLETED', completeCalls: 1, data: { ok: true } });
    expect(await runState(t, runId)).toEqual({ status: 'running', wait_state: null });
    expect(await auditFor(t, runId)).toHaveLength(1);
  });
});

describe.skipIf(!onPostgres)('decisions.md scale-out: completions on two instances', () => {
  it('spec 4.9: simultaneous waitpoint calls on two instances → one 200, one 409, one completion at the runtime', async () => {
    const other = await t.another();
    const agent = await taskAgent();
    const token = trigger.createWaitpointToken();
    const runId = await waitingViaCallback(agent, token.id);

    trigger.holdInspections();
    const url = `/api/runs/${runId}/waitpoint`;
    const first = t.app.inject({ method: 'POST', url, headers: agent.agentAuth, payload: {} });
    const second = other.app.inject({ method: 'POST', url, headers: agent.agentAuth, payload: {} });
    await trigger.held(2);
    trigger.release();
    const answers = await Promise.all([first, second]);

    expect(answers.map((r) => r.statusCode).sort()).toEqual([200, 409]);
    expect(token.completeCalls).toBe(1);
    expect(await auditFor(t, runId)).toHaveLength(1);
  });
});

describe('spec 8.1: one bucket for callback and waitpoint, 20/min per agent', () => {
  it('spec 8.1 / part 7: the 21st call across callback and waitpoint is 429 with Retry-After', async () => {
    const agent = await taskAgent();
    const run = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now: clock.now() });

    for (let i = 0; i < 10; i += 1) expect((await post(agent, `${run.id}/callback`, { type: 'started' })).statusCode).toBe(200);
    for (let i = 0; i < 10; i += 1) expect((await post(agent, `${run.id}/waitpoint`)).statusCode).toBe(409); // counted too

    const limited = await post(agent, `${run.id}/waitpoint`);
    expect(limited.statusCode).toBe(429);
    expect(limited.json().code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('40'); // seconds to the next minute boundary (spec part 7 rule 1)
    expect((await post(agent, `${run.id}/callback`, { type: 'started' })).statusCode).toBe(429);

    // Per agent: another agent's calls are not affected.
    const other = await taskAgent();
    const otherRun = await insertRun(t.db, { agentId: other.agent.id, status: 'queued', source: 'trigger', now: clock.now() });
    expect((await post(other, `${otherRun.id}/callback`, { type: 'started' })).statusCode).toBe(200);

    // A new minute, a new bucket.
    clock.advance(40_000);
    expect((await post(agent, `${run.id}/waitpoint`)).statusCode).toBe(409);
    clock.set(new Date('2026-03-02T10:00:20Z'));
  });
});
