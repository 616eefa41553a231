// Issue 12: a task holding one agent's key reports a waitpoint token that is not its own run's — `/waitpoint` must
// not complete it with the organization's runtime key. Spec 4.9: such a completion is a 409 waitpoint_unavailable.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { waitpointTag } from '../../src/runtimes/trigger-dev-mapping.ts';
import { foreignTokenReason } from '../../src/runs/waitpoint-ownership.ts';
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

const waitpoint = (runId: number, agent: SeededAgent) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${runId}/waitpoint`, headers: agent.agentAuth, payload: { payload: { approved: true } } });

async function expectRefusedAndUntouched(runId: number, res: Awaited<ReturnType<typeof waitpoint>>, message: RegExp) {
  expect(res.statusCode).toBe(409);
  expect(res.json()).toMatchObject({ code: 'waitpoint_unavailable', runId });
  expect(res.json().error).toMatch(message);
  expect((await runState(t, runId)).status).toBe('waiting');
  expect(await auditFor(t, runId)).toHaveLength(0);
}

describe('issue 12: a waitpoint token of another run is never completed (spec 4.9 → 409)', () => {
  it('n8n: the resume URL names another execution than the run\'s own → 409, that execution is not resumed', async () => {
    let victimResumed = false;
    const own = n8n.createExecution({ status: 'waiting', resumeWaiter: () => undefined });
    const victim = n8n.createExecution({ status: 'waiting', resumeWaiter: () => (victimResumed = true) });
    const runId = await waitingRun(t, flowAgent.agent.id, { tokenId: n8n.resumeUrl(victim.id) }, own.id);

    await expectRefusedAndUntouched(runId, await waitpoint(runId, flowAgent), new RegExp(`resumes execution "${victim.id}", not this run's execution "${own.id}"`));
    expect(victimResumed).toBe(false);
    expect(n8n.resumeCalls().filter((r) => r.path === `/webhook-waiting/${victim.id}`)).toHaveLength(0);
  });

  it('n8n: a run with no execution id yet — an execution of another workflow → 409; of the agent\'s own → 200', async () => {
    let victimResumed = false;
    const victim = n8n.createExecution({ status: 'waiting', workflowPath: 'someone-elses-path', resumeWaiter: () => (victimResumed = true) });
    const refused = await waitingRun(t, flowAgent.agent.id, { tokenId: n8n.resumeUrl(victim.id) }, null);
    await expectRefusedAndUntouched(refused, await waitpoint(refused, flowAgent), /of another workflow/);
    expect(victimResumed).toBe(false);

    let ownResumed = false;
    const own = n8n.createExecution({ status: 'waiting', workflowPath: flowAgent.agent.target!, resumeWaiter: () => (ownResumed = true) });
    const accepted = await waitingRun(t, flowAgent.agent.id, { tokenId: n8n.resumeUrl(own.id) }, null);
    expect((await waitpoint(accepted, flowAgent)).statusCode).toBe(200);
    expect(ownResumed).toBe(true);
  });

  it('Trigger.dev: a token tagged for another run → 409 and never completed; tagged for this run → 200', async () => {
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: 'placeholder' });
    const otherTag = waitpointTag({ runId: runId + 1000, deploymentId: t.ctx.deploymentId });
    const victim = trigger.createWaitpointToken('WAITING', [otherTag]);
    await t.db.query(`UPDATE runs SET wait_state = jsonb_set(wait_state, '{tokenId}', to_jsonb($2::text)) WHERE id = $1`, [runId, victim.id]);

    await expectRefusedAndUntouched(runId, await waitpoint(runId, taskAgent), /created for another run/);
    expect(victim.completeCalls).toBe(0);

    const ownRun = await waitingRun(t, taskAgent.agent.id, { tokenId: 'placeholder' });
    const own = trigger.createWaitpointToken('WAITING', ['customer:42', waitpointTag({ runId: ownRun, deploymentId: t.ctx.deploymentId })]);
    await t.db.query(`UPDATE runs SET wait_state = jsonb_set(wait_state, '{tokenId}', to_jsonb($2::text)) WHERE id = $1`, [ownRun, own.id]);
    expect((await waitpoint(ownRun, taskAgent)).statusCode).toBe(200);
    expect(own.completeCalls).toBe(1);
  });

  it('Trigger.dev: a token tagged for this run of ANOTHER deployment sharing the project is refused too', async () => {
    const runId = await waitingRun(t, taskAgent.agent.id, { tokenId: 'placeholder' });
    const token = trigger.createWaitpointToken('WAITING', [waitpointTag({ runId, deploymentId: '00000000-0000-4000-8000-000000000000' })]);
    await t.db.query(`UPDATE runs SET wait_state = jsonb_set(wait_state, '{tokenId}', to_jsonb($2::text)) WHERE id = $1`, [runId, token.id]);
    await expectRefusedAndUntouched(runId, await waitpoint(runId, taskAgent), /created for another run/);
    expect(token.completeCalls).toBe(0);
  });
});

describe('foreignTokenReason (pure)', () => {
  const run = { externalRunId: null, target: 'flows/a', runTag: 'ars_run:d:1' };
  it('a runtime that says nothing of the token leaves it to the runtime', () => {
    expect(foreignTokenReason(run, undefined)).toBeNull();
    expect(foreignTokenReason(run, { externalRunId: '7' })).toBeNull(); // no owner read, no execution id to compare
    expect(foreignTokenReason(run, { runTags: [] })).toBeNull();
  });
  it('an owner whose Webhook paths include the target (slashes trimmed) is the agent\'s', () => {
    expect(foreignTokenReason(run, { externalRunId: '7', owner: { workflowId: 'w', webhookPaths: ['flows/a'] } })).toBeNull();
    expect(foreignTokenReason(run, { externalRunId: '7', owner: { workflowId: 'w', webhookPaths: ['flows/b'] } })).toMatch(/another workflow/);
  });
  it('a known execution id is compared even when the owner is unknown', () => {
    expect(foreignTokenReason({ ...run, externalRunId: '7' }, { externalRunId: '8', owner: null })).toMatch(/not this run's execution "7"/);
    expect(foreignTokenReason({ ...run, externalRunId: '7' }, { externalRunId: '7', owner: null })).toBeNull();
  });
});
