// admin-api.md "Runs and audit": POST /api/admin/runs/{runId}/cancel and GET /api/admin/runs/{runId}/logs, against
// the runtime fakes (decisions.md: cancel at the runtime where it can, then `cancelled` through the guarded path).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake, n8nAnswers } from '../fakes/n8n-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
let t: TestApp;
const trigger = new TriggerDevFake();
const n8n = new N8nFake();
let task: SeededAgent;

beforeAll(async () => {
  await Promise.all([trigger.start(), n8n.start()]);
  trigger.registerTask('my-target');
  t = await createTestApp();
  task = await seedAgent(t, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey } });
});
afterAll(async () => {
  await t.close();
  await Promise.all([trigger.stop(), n8n.stop()]);
});

async function triggerOn(a: SeededAgent): Promise<number> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, payload: {} });
  expect(res.statusCode).toBe(201);
  return res.json().runId as number;
}

const cancel = (runId: number | string) => t.app.inject({ method: 'POST', url: `/api/admin/runs/${runId}/cancel`, headers: admin });
const logs = (runId: number | string) => t.app.inject({ method: 'GET', url: `/api/admin/runs/${runId}/logs`, headers: admin });

async function auditFor(runId: number) {
  const { rows } = await t.db.query<{ action: string; details: Record<string, unknown> }>('SELECT action, details FROM audit_log WHERE run_id = $1', [runId]);
  return rows;
}

describe('admin-api.md: POST /api/admin/runs/{runId}/cancel', () => {
  it('decisions.md: cancels a Trigger.dev run at the runtime, then 200 with the cancelled run; audited as run.cancelled', async () => {
    const runId = await triggerOn(task);
    const externalId = (await readRun(t, runId))!.external_run_id as string;
    const res = await cancel(runId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ runId, agentId: task.agent.id, status: 'cancelled', external_run_id: externalId, completed_at: expect.any(String) });
    expect(trigger.requestsTo(`/api/v2/runs/${externalId}/cancel`, 'POST')).toHaveLength(1);
    expect(trigger.run(externalId).status).toBe('CANCELED');
    expect(await auditFor(runId)).toEqual([{ action: 'run.cancelled', details: { via: 'admin', runtime_cancel: 'cancelled' } }]);
  });

  it('admin-api.md: 409 when already terminal, 404 for an unknown or malformed id, 401 without the admin token', async () => {
    const runId = await triggerOn(task);
    expect((await cancel(runId)).statusCode).toBe(200);
    const again = await cancel(runId);
    expect(again.statusCode).toBe(409);
    expect(again.json()).toMatchObject({ code: 'conflict', runId });
    expect((await cancel(987_654_321)).statusCode).toBe(404);
    expect((await cancel('abc')).statusCode).toBe(404);
    const noAuth = await t.app.inject({ method: 'POST', url: `/api/admin/runs/${runId}/cancel` });
    expect(noAuth.statusCode).toBe(401);
  });

  it('decisions.md: a runtime that cannot be reached does not block the cancel; the audit says so', async () => {
    const down = await seedAgent(t, { runtime: { kind: 'task', baseUrl: await unusedUrl(), apiKey: 'k' } });
    const run = await insertRun(t.db, { agentId: down.agent.id, status: 'running', source: 'trigger', now: new Date(), externalRunId: 'run_gone', startedAt: new Date() });
    const res = await cancel(run.id);
    expect(res.statusCode).toBe(200);
    expect(res.json().status).toBe('cancelled');
    const note = 'The runtime did not confirm the cancel: the work may have run on there.';
    expect((await auditFor(run.id))[0]!.details).toEqual({ via: 'admin', runtime_cancel: 'failed', runtime_note: note });
    expect(res.json().runtime_note).toBe(note);
  });

  it('decisions.md: a held n8n call on this instance is aborted; its late answer cannot change the cancelled run', async () => {
    n8n.registerWorkflow('wf-never', n8nAnswers.never());
    const wf = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'wf-never' });
    const runId = await triggerOn(wf);
    const held = t.ctx.heldCalls.get(runId);
    expect(held).not.toBeNull();
    const res = await cancel(runId);
    expect(res.statusCode).toBe(200);
    const settlement = await held!.settled;
    expect(settlement!.answer.aborted).toBe(true);
    expect(settlement!.result).toBeNull();
    expect(await readRun(t, runId)).toMatchObject({ status: 'cancelled', error: 'Run cancelled by a platform admin' });
    expect(t.ctx.heldCalls.get(runId)).toBeNull();
  });

  it('issue 11 item 2: a held n8n run with no execution id yet is looked up by its payload and stopped (2.41.1); the id is kept', async () => {
    n8n.version = '2.41.1';
    n8n.registerWorkflow('wf-long', n8nAnswers.never());
    const wf = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'wf-long' });
    const runId = await triggerOn(wf);
    const res = await cancel(runId);
    expect(res.statusCode).toBe(200);
    const executionId = res.json().external_run_id as string;
    expect(executionId).toEqual(expect.any(String));
    expect(n8n.execution(executionId).status).toBe('canceled');
    expect(n8n.requestsTo(`/api/v1/executions/${executionId}/stop`, 'POST')).toHaveLength(1);
    expect(await auditFor(runId)).toEqual([{ action: 'run.cancelled', details: { via: 'admin', runtime_cancel: 'cancelled' } }]);
    expect(await readRun(t, runId)).toMatchObject({ status: 'cancelled', external_run_id: executionId, runtime_note: null });
  });

  it('issue 11 item 2: n8n 2.8.4 has no stop route: the run is cancelled here and the run detail and the audit say the work may go on', async () => {
    n8n.version = '2.8.4';
    try {
      n8n.registerWorkflow('wf-old', n8nAnswers.never());
      const wf = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'wf-old' });
      const runId = await triggerOn(wf);
      const res = await cancel(runId);
      expect(res.statusCode).toBe(200);
      expect(res.json().runtime_note).toMatch(/cannot stop a run/);
      const [entry] = await auditFor(runId);
      expect(entry!.details).toMatchObject({ runtime_cancel: 'not_supported', runtime_note: res.json().runtime_note });
      const detail = await t.app.inject({ method: 'GET', url: `/api/admin/runs/${runId}`, headers: admin });
      expect(detail.json()).toMatchObject({ status: 'cancelled', runtime_note: res.json().runtime_note });
    } finally {
      n8n.version = '2.41.1';
    }
  });

  it('runtimes.md: an n8n run with an execution id is stopped through the executions API', async () => {
    const wf = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'x' });
    const ex = n8n.createExecution({ status: 'running', workflowPath: 'x' });
    const run = await insertRun(t.db, { agentId: wf.agent.id, status: 'running', source: 'trigger', now: new Date(), externalRunId: ex.id, startedAt: new Date() });
    expect((await cancel(run.id)).statusCode).toBe(200);
    expect(n8n.execution(ex.id).status).toBe('canceled');
    expect((await auditFor(run.id))[0]!.details).toMatchObject({ runtime_cancel: 'cancelled' });
  });
});

describe('admin-api.md: GET /api/admin/runs/{runId}/logs', () => {
  it('spec 2.2: logs are fetched from the runtime on demand', async () => {
    const runId = await triggerOn(task);
    const externalId = (await readRun(t, runId))!.external_run_id as string;
    trigger.addEvents(externalId, [{ message: 'Attempt 1', level: 'INFO', startTime: '2026-03-01T10:00:00.000Z', duration: 2_000_000, isError: false }]);
    const res = await logs(runId);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ logs: [{ time: '2026-03-01T10:00:00.000Z', level: 'info', message: 'Attempt 1', isError: false, durationMs: 2 }] });
  });

  it('admin-api.md: a run the runtime never knew (no external id) has an empty list; unknown run 404', async () => {
    const run = await insertRun(t.db, { agentId: task.agent.id, status: 'queued', source: 'trigger', now: new Date() });
    expect((await logs(run.id)).json()).toEqual({ logs: [] });
    expect((await logs(987_654_321)).statusCode).toBe(404);
  });

  it('issue 12: a run recorded under another task\'s external id shows none of that run\'s logs (409, events never read)', async () => {
    const victimRun = await triggerOn(task);
    const victimExternal = (await readRun(t, victimRun))!.external_run_id as string;
    trigger.addEvents(victimExternal, [{ message: 'secret step of the other task', level: 'INFO', startTime: '2026-03-01T10:00:00.000Z', duration: 1, isError: false }]);
    // Another agent of the same organization and runtime, serving another task, registered the victim's id.
    const other = await seedAgent(t, { orgId: task.orgId, target: 'another-task' });
    await t.db.query('UPDATE agents SET runtime_id = $2 WHERE id = $1', [other.agent.id, task.runtimeId]);
    const run = await insertRun(t.db, { agentId: other.agent.id, status: 'running', source: 'register', now: new Date(), externalRunId: victimExternal });
    const eventsBefore = trigger.requestsTo(`/api/v1/runs/${victimExternal}/events`).length;

    const res = await logs(run.id);

    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'conflict', runId: run.id });
    expect(res.json().error).toMatch(/belongs to another task/);
    expect(res.body).not.toContain('secret step');
    expect(trigger.requestsTo(`/api/v1/runs/${victimExternal}/events`)).toHaveLength(eventsBefore);
  });

  it('admin-api.md: 502 upstream_failed when the runtime fails, without its secret in the body', async () => {
    const runId = await triggerOn(task);
    trigger.setFault({ kind: 'garbage', status: 500, contentType: 'application/json', body: '{"error":"db down"}' }, { path: '/api/v1/runs', times: 1 });
    const res = await logs(runId);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toMatchObject({ code: 'upstream_failed', runId });
    expect(res.body).not.toContain(trigger.secretKey);
  });
});
