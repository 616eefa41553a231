// Spec part 1 / part 6 "runtime failure alert", decisions.md "Events": POST /api/runtimes/{runtimeId}/alerts.
// Trigger.dev signs the raw body (x-trigger-signature-hmacsha256); n8n's error workflow sends the bearer secret.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHmac } from 'node:crypto';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, readRun, seedAgent, seedRuntime, type SeededAgent } from '../helpers/fixtures.ts';
import { signedDeploymentAlert, signedFailureAlert, type TriggerAlertError } from '../fakes/trigger-dev-fake.ts';
import { N8nFake, n8nErrorWorkflowAlert } from '../fakes/n8n-fake.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';

const TRIGGER_SECRET = 'whsec_trigger_alert_secret_0123456789';
const N8N_SECRET = 'n8n_alert_secret_0123456789abcdef';

let t: TestApp;
let task: SeededAgent;
let workflow: SeededAgent;
let externalSeq = 0;
// n8n alerts name the workflow but not its path: the service reads the execution to see whose run it is.
const n8n = new N8nFake();
const FLOW = 'agent-flow';

beforeAll(async () => {
  await n8n.start();
  t = await createTestApp();
  // `my-task` is the task the fake's alerts name unless told otherwise.
  task = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://trigger.invalid', apiKey: 'tr_dev_x', alertSecret: TRIGGER_SECRET }, target: 'my-task' });
  workflow = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey, alertSecret: N8N_SECRET }, target: FLOW });
});
afterAll(async () => {
  await t.close();
  await n8n.stop();
});

async function runningRun(a: SeededAgent, externalRunId = `run_${++externalSeq}`, source = 'trigger'): Promise<{ id: number; externalRunId: string }> {
  const run = await insertRun(t.db, { agentId: a.agent.id, status: 'running', source, now: new Date(), externalRunId, startedAt: new Date() });
  return { id: run.id, externalRunId };
}

/** An agent on the same runtime (same organization) as `a`, serving another task or workflow. */
async function sibling(a: SeededAgent, target: string): Promise<SeededAgent> {
  const b = await seedAgent(t, { orgId: a.orgId, target });
  await t.db.query('UPDATE agents SET runtime_id = $2 WHERE id = $1', [b.agent.id, a.runtimeId]);
  return b;
}

function send(runtimeId: number | string, alert: { body: string; headers: Record<string, string> }) {
  return t.app.inject({ method: 'POST', url: `/api/runtimes/${runtimeId}/alerts`, headers: alert.headers, payload: alert.body });
}

describe('decisions.md "Events": Trigger.dev failure alerts', () => {
  it('spec part 1: a signed alert.run.failed fails the run with the task error', async () => {
    const run = await runningRun(task);
    const res = await send(task.runtimeId!, signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId, error: { type: 'BUILT_IN_ERROR', message: 'Out of credits', name: 'Error', stackTrace: 'Error: Out of credits' } }));
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, outcome: 'applied', runId: run.id });
    const row = (await readRun(t, run.id))!;
    expect(row).toMatchObject({ status: 'failed', error: 'Out of credits' });
    expect(row.completed_at).not.toBeNull();
  });

  it('runtimes.md: the legacy shape (no id, no type, run and error at the top) fails the run; a repeat for that run is a duplicate', async () => {
    const run = await runningRun(task);
    const alert = signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId, legacy: true, error: { type: 'BUILT_IN_ERROR', message: 'Segfault', name: 'Error', stackTrace: 'Error: Segfault' } });
    expect(alert.payload).not.toHaveProperty('id');
    expect(alert.payload).not.toHaveProperty('type');
    const res = await send(task.runtimeId!, alert);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ received: true, outcome: 'applied', runId: run.id });
    expect(await readRun(t, run.id)).toMatchObject({ status: 'failed', error: 'Segfault' });
    const again = await send(task.runtimeId!, alert);
    expect(again.json()).toMatchObject({ received: true, outcome: 'duplicate' });
  });

  it('runtimes.md: a repeated delivery (same alert id) is a 200 no-op', async () => {
    const run = await runningRun(task);
    const alert = signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId, id: 'alert_dup_1' });
    expect((await send(task.runtimeId!, alert)).json().outcome).toBe('applied');
    const after = await readRun(t, run.id);
    const again = await send(task.runtimeId!, alert);
    expect(again.statusCode).toBe(200);
    expect(again.json()).toEqual({ received: true, outcome: 'duplicate', runId: null });
    expect(await readRun(t, run.id)).toEqual(after);
  });

  it('decisions.md: a bad, missing or re-serialised signature, an unknown runtime, or a runtime without alert secret → 401, nothing written', async () => {
    const run = await runningRun(task);
    const good = signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId });
    const wrongKey = signedFailureAlert({ secret: 'another-secret', runId: run.externalRunId });
    const noSig = { body: good.body, headers: { 'content-type': 'application/json' } };
    // The same JSON with different bytes: the signature covers the raw body, not the parsed value.
    const reserialised = { body: JSON.stringify(good.payload, null, 2), headers: good.headers };
    const noSecretRuntime = await seedRuntime(t, task.orgId, { kind: 'task', baseUrl: 'http://x.invalid', apiKey: 'k', alertSecret: null });
    const receipts = await countRows(t, 'alert_receipts');
    for (const [rt, alert] of [
      [task.runtimeId!, wrongKey], [task.runtimeId!, noSig], [task.runtimeId!, reserialised],
      [999_999, good], ['abc', good], [noSecretRuntime, good],
    ] as const) {
      const res = await send(rt, alert);
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
    }
    expect((await readRun(t, run.id))!.status).toBe('running');
    expect(await countRows(t, 'alert_receipts')).toBe(receipts);
    expect((await send(task.runtimeId!, good)).statusCode).toBe(200);
  });

  it('decisions.md: the alert must come from the run\'s own runtime; another runtime\'s run with that id is untouched', async () => {
    const other = await seedAgent(t, { orgId: task.orgId, runtime: { kind: 'task', baseUrl: 'http://other.invalid', apiKey: 'k', alertSecret: 'other-secret-0123456789' } });
    const theirs = await runningRun(other, 'run_shared_id');
    const res = await send(task.runtimeId!, signedFailureAlert({ secret: TRIGGER_SECRET, runId: 'run_shared_id' }));
    expect(res.json()).toEqual({ received: true, outcome: 'unknown_run', runId: null });
    expect((await readRun(t, theirs.id))!.status).toBe('running');
  });

  it('spec part 1: an alert for a run already terminal is a silent no-op (first terminal write wins)', async () => {
    const run = await runningRun(task);
    await t.app.inject({ method: 'POST', url: `/api/runs/${run.id}/callback`, headers: task.agentAuth, payload: { type: 'output', complete: true, output: { ok: 1 } } });
    const before = (await readRun(t, run.id))!;
    expect(before.status).toBe('completed');
    const res = await send(task.runtimeId!, signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId }));
    expect(res.json()).toEqual({ received: true, outcome: 'already_terminal', runId: run.id });
    expect(await readRun(t, run.id)).toEqual(before);
  });

  it('runtimes.md: CANCELED (never sent) cancels rather than fails; other alert types are ignored; a signed non-JSON body is 400', async () => {
    const run = await runningRun(task);
    const canceled = signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId });
    const payload = { ...canceled.payload, object: { ...(canceled.payload.object as object), run: { id: run.externalRunId, status: 'CANCELED' } } };
    const res = await send(task.runtimeId!, sign(JSON.stringify(payload)));
    expect(res.statusCode).toBe(200);
    expect((await readRun(t, run.id))!.status).toBe('cancelled');

    const run2 = await runningRun(task);
    const deployment = { id: 'alert_dep', type: 'alert.deployment.failed', object: { run: { id: run2.externalRunId } } };
    const ignored = await send(task.runtimeId!, sign(JSON.stringify(deployment)));
    expect(ignored.json()).toMatchObject({ outcome: 'ignored' });
    expect((await readRun(t, run2.id))!.status).toBe('running');

    const bad = await send(task.runtimeId!, sign('not json'));
    expect(bad.statusCode).toBe(400);
  });
});

describe('issue 36: Trigger.dev alerts as its source sends them', () => {
  // Item 6: an alert's error is Trigger.dev's TaskRunError, tagged by `type`; each kind keeps its own text.
  const errorsByType: Array<[string, TriggerAlertError, string]> = [
    ['BUILT_IN_ERROR: its message', { type: 'BUILT_IN_ERROR', name: 'TypeError', message: 'x is not a function', stackTrace: 'TypeError: x is not a function' }, 'x is not a function'],
    ['BUILT_IN_ERROR without a message: its name', { type: 'BUILT_IN_ERROR', name: 'AbortError', message: '', stackTrace: '' }, 'AbortError'],
    ['STRING_ERROR (`throw "…"`): the string', { type: 'STRING_ERROR', raw: 'quota exhausted' }, 'quota exhausted'],
    ['CUSTOM_ERROR (a thrown object): its raw JSON', { type: 'CUSTOM_ERROR', raw: '{"code":"E_QUOTA","detail":"no credits"}' }, '{"code":"E_QUOTA","detail":"no credits"}'],
    ['INTERNAL_ERROR with a message: the message and its code', { type: 'INTERNAL_ERROR', code: 'TASK_PROCESS_OOM_KILLED', message: 'Out of memory' }, 'Out of memory (TASK_PROCESS_OOM_KILLED)'],
    ['INTERNAL_ERROR without one: the retrieve API\'s sentence with its code', { type: 'INTERNAL_ERROR', code: 'MAX_DURATION_EXCEEDED' }, 'trigger.dev internal error (MAX_DURATION_EXCEEDED)'],
  ];
  it.each(errorsByType)('spec part 1 (alert ends the run with its reason): %s', async (_label, error, expected) => {
    for (const legacy of [false, true]) {
      const run = await runningRun(task);
      const res = await send(task.runtimeId!, signedFailureAlert({ secret: TRIGGER_SECRET, runId: run.externalRunId, error, legacy }));
      expect(res.json()).toMatchObject({ outcome: 'applied', runId: run.id });
      expect(await readRun(t, run.id)).toMatchObject({ status: 'failed', error: expected });
    }
  });

  // Item 7: deployment alerts (no run) are acknowledged and ignored on both channel versions, so Trigger.dev does
  // not send each of them three times.
  it.each([
    ['a legacy channel\'s failed deployment (no type, id or run)', { legacy: true, failed: true }],
    ['a legacy channel\'s successful deployment', { legacy: true, failed: false }],
    ['a v2 channel\'s alert.deployment.failed', { legacy: false, failed: true }],
    ['a v2 channel\'s alert.deployment.success', { legacy: false, failed: false }],
  ])('%s: 200 ignored, nothing remembered', async (_label, opts) => {
    const receipts = await countRows(t, 'alert_receipts');
    const res = await send(task.runtimeId!, signedDeploymentAlert({ secret: TRIGGER_SECRET, ...opts }));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ received: true, outcome: 'ignored', runId: null });
    expect(await countRows(t, 'alert_receipts')).toBe(receipts);
  });
});

describe('issue 12 finding 3: an alert ends only the run of the agent whose task the runtime run ran', () => {
  it('agent A registered agent B\'s run id: B\'s alert fails B\'s run, and A\'s run is untouched', async () => {
    const b = await sibling(task, 'task-b');
    const theirs = await runningRun(b, 'run_of_b');
    const mine = await runningRun(task, 'run_of_b', 'register');
    const res = await send(task.runtimeId!, signedFailureAlert({ secret: TRIGGER_SECRET, runId: 'run_of_b', taskIdentifier: 'task-b', error: { type: 'STRING_ERROR', raw: 'B\'s secret failure' } }));
    expect(res.json()).toEqual({ received: true, outcome: 'applied', runId: theirs.id });
    expect(await readRun(t, theirs.id)).toMatchObject({ status: 'failed', error: 'B\'s secret failure' });
    expect(await readRun(t, mine.id)).toMatchObject({ status: 'running', error: null });
  });

  it('an alert about another task\'s run that only this agent tracks is ignored (legacy shape too)', async () => {
    const mine = await runningRun(task, 'run_of_nobody_here', 'register');
    for (const legacy of [false, true]) {
      const res = await send(task.runtimeId!, signedFailureAlert({ secret: TRIGGER_SECRET, runId: 'run_of_nobody_here', taskIdentifier: 'task-b', legacy }));
      expect(res.json()).toEqual({ received: true, outcome: 'ignored', runId: null });
    }
    expect((await readRun(t, mine.id))!.status).toBe('running');
  });

  it('n8n: an execution of another workflow does not end this agent\'s run; one of its own does', async () => {
    const foreign = n8n.createExecution({ status: 'error', workflowPath: 'someone-else' });
    const mine = await runningRun(workflow, foreign.id, 'register');
    const res = await send(workflow.runtimeId!, n8nErrorWorkflowAlert({ alertSecret: N8N_SECRET, executionId: foreign.id, workflowId: foreign.workflowId }));
    expect(res.json()).toEqual({ received: true, outcome: 'ignored', runId: null });
    expect((await readRun(t, mine.id))!.status).toBe('running');
    expect(n8n.requestsTo(`/api/v1/executions/${foreign.id}`, 'GET')).toHaveLength(1);
  });

  it('n8n: when n8n cannot be asked whose execution it is, nothing is applied or remembered (502), and a resend is handled', async () => {
    const ex = n8n.createExecution({ status: 'error', workflowPath: FLOW });
    const run = await runningRun(workflow, ex.id);
    const alert = n8nErrorWorkflowAlert({ alertSecret: N8N_SECRET, executionId: ex.id });
    n8n.setFault({ kind: 'garbage', status: 503, contentType: 'application/json', body: '{"message":"down"}' }, { path: '/api/v1/executions/', times: 1 });
    const refused = await send(workflow.runtimeId!, alert);
    expect(refused.statusCode).toBe(502);
    expect(refused.json().code).toBe('upstream_failed');
    expect((await readRun(t, run.id))!.status).toBe('running');
    expect((await send(workflow.runtimeId!, alert)).json()).toEqual({ received: true, outcome: 'applied', runId: run.id });
  });
});

describe('decisions.md "Events": n8n error-workflow alerts', () => {
  it('runtimes.md: bearer alert secret + execution id fails the run with the error message; a repeat is ignored', async () => {
    const ex = n8n.createExecution({ status: 'error', workflowPath: FLOW });
    const run = await runningRun(workflow, ex.id);
    const alert = n8nErrorWorkflowAlert({ alertSecret: N8N_SECRET, executionId: ex.id, message: 'Node "HTTP Request" failed' });
    const res = await send(workflow.runtimeId!, alert);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ received: true, outcome: 'applied', runId: run.id });
    expect(await readRun(t, run.id)).toMatchObject({ status: 'failed', error: 'Node "HTTP Request" failed' });
    expect((await send(workflow.runtimeId!, alert)).json().outcome).toBe('duplicate');
  });

  it('decisions.md: a wrong or missing bearer → 401; a Trigger.dev signature does not stand in for it', async () => {
    const run = await runningRun(workflow, '4712');
    const wrong = n8nErrorWorkflowAlert({ alertSecret: 'nope', executionId: '4712' });
    expect((await send(workflow.runtimeId!, wrong)).statusCode).toBe(401);
    const signed = { body: wrong.body, headers: { 'content-type': 'application/json', 'x-trigger-signature-hmacsha256': createHmac('sha256', N8N_SECRET).update(wrong.body).digest('hex') } };
    expect((await send(workflow.runtimeId!, signed)).statusCode).toBe(401);
    expect((await readRun(t, run.id))!.status).toBe('running');
  });

  it('runtimes.md: an alert without execution id is 400 naming the field', async () => {
    const res = await send(workflow.runtimeId!, { body: JSON.stringify({ workflow: { id: 'x' } }), headers: { 'content-type': 'application/json', authorization: `Bearer ${N8N_SECRET}` } });
    expect(res.statusCode).toBe(400);
    expect(res.json().error).toContain('execution.id');
  });
});

function sign(body: string): { body: string; headers: Record<string, string> } {
  return { body, headers: { 'content-type': 'application/json', 'x-trigger-signature-hmacsha256': createHmac('sha256', TRIGGER_SECRET).update(body).digest('hex') } };
}
