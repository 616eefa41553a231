// Issue 12 finding 3 (confused deputy on /register) and finding 4 (ids as path segments), against the runtime fakes:
// any external id used to be accepted at /register and then polled and cancelled with the organization's runtime
// key, so agent A could adopt agent B's run (A's run `completed` with B's output) and an admin cancel of A's run
// stopped B's execution. Now a runtime run counts for an agent only when it ran the agent's task or workflow
// (decisions.md "Register, ingest and callback"). Alerts: test/runs/alerts.test.ts; recovery:
// test/runs/recovery-task.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, seedOrg, seedRuntime, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { expectError, permissiveLimiter } from '../runtime-api/support.ts';

const clock = new ManualClock(new Date('2026-05-01T10:00:00Z'));
const trigger = new TriggerDevFake();
const n8n = new N8nFake();
let t: TestApp;
let a: SeededAgent; // task-a
let b: SeededAgent; // task-b, same organization and runtime
let flow: SeededAgent; // n8n workflow on path flow-a

beforeAll(async () => {
  await Promise.all([trigger.start(), n8n.start()]);
  trigger.registerTask('task-a');
  trigger.registerTask('task-b');
  t = await createTestApp({ clock, limiter: permissiveLimiter });
  const orgId = await seedOrg(t);
  const taskRuntime = await seedRuntime(t, orgId, { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey });
  const workflowRuntime = await seedRuntime(t, orgId, { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey });
  a = await onRuntime(await seedAgent(t, { orgId, target: 'task-a' }), taskRuntime);
  b = await onRuntime(await seedAgent(t, { orgId, target: 'task-b' }), taskRuntime);
  flow = await onRuntime(await seedAgent(t, { orgId, target: 'flow-a' }), workflowRuntime);
});
afterAll(async () => {
  await t.close();
  await Promise.all([trigger.stop(), n8n.stop()]);
});

async function onRuntime(agent: SeededAgent, runtimeId: number): Promise<SeededAgent> {
  const { rows } = await t.db.query<SeededAgent['agent']>('UPDATE agents SET runtime_id = $2 WHERE id = $1 RETURNING *', [agent.agent.id, runtimeId]);
  return { ...agent, agent: rows[0]!, runtimeId };
}

const register = (agent: SeededAgent, externalRunId: string) =>
  t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/register`, headers: agent.ingestAuth, payload: { externalRunId } });
const cancel = (runId: number) => t.app.inject({ method: 'POST', url: `/api/admin/runs/${runId}/cancel`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });

async function registered(agent: SeededAgent, externalRunId: string): Promise<number> {
  const res = await register(agent, externalRunId);
  expect(res.statusCode, res.body).toBe(201);
  return res.json().runId as number;
}

/** A run the caller started on Trigger.dev itself (what /register is for), with the organization's key. */
async function startedAtRuntime(task: string): Promise<string> {
  const res = await fetch(`${trigger.url}/api/v1/tasks/${task}/trigger`, {
    method: 'POST',
    headers: { authorization: `Bearer ${trigger.secretKey}`, 'content-type': 'application/json', 'x-trigger-api-version': '2025-07-16' },
    body: JSON.stringify({ payload: { started: 'by the caller' } }),
  });
  return ((await res.json()) as { id: string }).id;
}

async function auditOf(runId: number): Promise<Record<string, unknown>> {
  const { rows } = await t.db.query<{ details: Record<string, unknown> }>("SELECT details FROM audit_log WHERE run_id = $1 AND action = 'run.cancelled'", [runId]);
  return rows[0]!.details;
}

describe('issue 12 finding 3: /register adopts only a runtime run of the agent\'s own task (Trigger.dev)', () => {
  it('agent A registers agent B\'s run id: the first poll (due at once) fails A\'s run with the reason, and B\'s output never reaches it', async () => {
    const theirs = await startedAtRuntime('task-b');
    trigger.completeRun(theirs, { secret: 'only for B' }, new Date(clock.now().getTime() - 2000), clock.now());
    const runB = await registered(b, theirs);
    const runA = await registered(a, theirs);
    expect((await readRun(t, runA))!.next_poll_at).toEqual(clock.now()); // verified at the next sweep, not after an interval

    await pollDueRuns(t.ctx);
    const mine = (await readRun(t, runA))!;
    expect(mine).toMatchObject({ status: 'failed', output_data: null, outputs: 0, next_poll_at: null });
    expect(mine.error).toBe(`the runtime run "${theirs}" belongs to another task, not to this agent's task "task-a"`);
    expect(JSON.stringify(mine)).not.toContain('only for B');
    // B's own registration of the same run is B's, and completes with B's output.
    expect(await readRun(t, runB)).toMatchObject({ status: 'completed', output_data: { secret: 'only for B' } });
  });

  it('a registered run of the agent\'s own task is polled to its end as before', async () => {
    const mine = await startedAtRuntime('task-a');
    const runId = await registered(a, mine);
    trigger.setRun(mine, { status: 'EXECUTING', startedAt: clock.now() });
    await pollDueRuns(t.ctx);
    expect((await readRun(t, runId))!.status).toBe('running');
    trigger.completeRun(mine, { answer: 42 }, clock.now(), new Date(clock.now().getTime() + 1000));
    clock.advance(a.agent.poll_interval_s * 1000 + 1000);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'completed', output_data: { answer: 42 } });
  });

  it('an admin cancel of A\'s run never cancels B\'s run at the runtime; A\'s own run is cancelled there', async () => {
    const theirs = await startedAtRuntime('task-b');
    trigger.setRun(theirs, { status: 'EXECUTING', startedAt: clock.now() });
    const runA = await registered(a, theirs); // not polled yet: the cancel comes first
    const res = await cancel(runA);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'cancelled', runtime_note: expect.stringMatching(/another task or workflow/) });
    expect(trigger.requestsTo(`/api/v2/runs/${theirs}/cancel`)).toHaveLength(0);
    expect(trigger.run(theirs).status).toBe('EXECUTING');
    expect(await auditOf(runA)).toMatchObject({ runtime_cancel: 'not_owned' });

    const mine = await startedAtRuntime('task-a');
    const own = await registered(a, mine);
    expect((await cancel(own)).statusCode).toBe(200);
    expect(trigger.requestsTo(`/api/v2/runs/${mine}/cancel`, 'POST')).toHaveLength(1);
    expect(trigger.run(mine).status).toBe('CANCELED');
    expect(await auditOf(own)).toMatchObject({ runtime_cancel: 'cancelled' });
  });
});

describe('issue 12 finding 3: the same for n8n (an execution of a workflow serving the agent\'s path)', () => {
  const done = (path: string) => n8n.createExecution({
    status: 'success', workflowPath: path, stoppedAt: new Date(), lastNodeExecuted: 'Respond',
    runData: { Respond: [{ startTime: Date.now(), data: { main: [[{ json: { from: path } }]] } }] },
  });

  it('an execution of another workflow is failed at the first poll, without its output; one of the agent\'s workflow completes', async () => {
    const foreign = done('flow-b');
    const runId = await registered(flow, foreign.id);
    const own = done('flow-a');
    const ownRun = await registered(flow, own.id);
    await pollDueRuns(t.ctx);
    const run = (await readRun(t, runId))!;
    expect(run).toMatchObject({ status: 'failed', output_data: null });
    expect(run.error).toBe(`the runtime run "${foreign.id}" belongs to another workflow, not to one serving this agent's webhook path "flow-a"`);
    expect(await readRun(t, ownRun)).toMatchObject({ status: 'completed', output_data: { from: 'flow-a' } });
  });

  it('an admin cancel never stops another workflow\'s execution', async () => {
    const foreign = n8n.createExecution({ status: 'running', workflowPath: 'flow-b' });
    const runId = await registered(flow, foreign.id);
    expect((await cancel(runId)).statusCode).toBe(200);
    expect(n8n.requestsTo(`/api/v1/executions/${foreign.id}/stop`)).toHaveLength(0);
    expect(n8n.execution(foreign.id).status).toBe('running');
    expect(await auditOf(runId)).toMatchObject({ runtime_cancel: 'not_owned' });
  });
});

describe('issue 12 finding 4: an external run id never changes a runtime path', () => {
  it('"." and ".." are refused at the door, naming the field: /register 422, /ingest 400', async () => {
    for (const id of ['.', '..']) {
      expect(expectError(await register(a, id), 422, 'validation_failed').error).toMatch(/body\.externalRunId/);
    }
    const standalone = await seedAgent(t, { managed_by: 'standalone' });
    for (const id of ['.', '..']) {
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${standalone.agent.id}/runs/ingest`, headers: standalone.ingestAuth, payload: { externalRunId: id, status: 'running' } });
      expect(expectError(res, 400, 'invalid_body').error).toMatch(/body\.externalRunId/);
    }
  });

  it('ids with /, \\, % or dots stay one encoded segment of the run\'s path, in polls and cancels', async () => {
    const ids = ['a/b', 'a\\b', '%2e%2e', '..%2f..', '..\\..', '...', '../task-a'];
    const before = trigger.requests.length;
    const runIds = [];
    for (const id of ids) runIds.push(await registered(a, id));
    await pollDueRuns(t.ctx);
    for (const runId of runIds) expect((await cancel(runId)).statusCode).toBe(200);
    const sent = trigger.requests.slice(before);
    for (const id of ids) {
      const read = sent.filter((r) => r.method === 'GET' && r.path === `/api/v3/runs/${encodeURIComponent(id)}`);
      expect(read.length, id).toBe(2); // the poll, and the ownership read before the cancel
    }
    // Nothing else reached the runtime: no path outside /api/v3/runs/{one segment}, and no cancel (the runs are unknown there).
    expect(sent.filter((r) => !/^\/api\/v3\/runs\/[^/]+$/.test(r.path))).toEqual([]);
  });

  it('a run stored with the id ".." before this check existed sends nothing to the runtime', async () => {
    const run = await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'register', now: clock.now(), externalRunId: '..', startedAt: clock.now(), nextPollAt: clock.now() });
    const before = trigger.requests.length;
    await pollDueRuns(t.ctx);
    expect((await cancel(run.id)).statusCode).toBe(200);
    expect(trigger.requests.slice(before)).toEqual([]);
  });
});
