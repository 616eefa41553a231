// A run's result is never dropped by its bookkeeping (issue "Runs survive restarts, outages and cancels", item 3):
// the runtime's id for a run is stored only when the runs table can take it. An id another run of the agent holds
// (UNIQUE(agent_id, external_run_id): a constant x-n8n-execution-id, an n8n whose ids restarted) or one the column
// refuses (empty, over 255 characters) is left out, and the run still ends as the runtime said (spec part 3).
// The download path is tested with the other downloads (test/sync/trigger-and-download.test.ts).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun } from '../helpers/fixtures.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { HEAD_COLUMNS, insertRun, recordTriggered } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { permissiveLimiter, workflowAgent } from '../sync/sync-helpers.ts';

const n8n = new N8nFake();
let t: TestApp;

beforeAll(async () => {
  await n8n.start();
  t = await createTestApp({ limiter: permissiveLimiter });
});
afterAll(async () => {
  await n8n.stop();
  await t.close();
});

const wait = (a: { agent: { id: number }; ingestAuth: Record<string, string> }) =>
  t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-wait`, headers: a.ingestAuth, payload: { timeoutMs: 10_000 } });

describe('the runtime id of a run never costs the run its result', () => {
  it('spec 4.2: two answers with the same x-n8n-execution-id both complete their runs; the second keeps no external id', async () => {
    const a = await workflowAgent(t, n8n, { json: { done: true }, headers: { 'x-n8n-execution-id': 'always-the-same' } });
    const first = await wait(a);
    const second = await wait(a);
    expect(first.statusCode, first.body).toBe(200);
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json()).toMatchObject({ status: 'completed', output_data: { done: true } });
    expect((await readRun(t, first.json().runId))!.external_run_id).toBe('always-the-same');
    const run = await readRun(t, second.json().runId);
    expect(run).toMatchObject({ status: 'completed', output_data: { done: true }, external_run_id: null });
    expect(t.logs.some((l) => l.includes('was not recorded') && l.includes(`"runId":${second.json().runId}`))).toBe(true);
  });

  it('spec 2.2: an id the column cannot hold (over 255 characters) is left out; the run completes', async () => {
    const a = await workflowAgent(t, n8n, { json: { ok: 1 }, headers: { 'x-n8n-execution-id': 'x'.repeat(300) } });
    const res = await wait(a);
    expect(res.statusCode, res.body).toBe(200);
    expect(await readRun(t, res.json().runId)).toMatchObject({ status: 'completed', output_data: { ok: 1 }, external_run_id: null });
  });

  it('spec part 3: a terminal write whose id is taken still applies (directly against the repository)', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    const now = new Date();
    await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'trigger', now, externalRunId: 'taken' });
    const { id } = await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'trigger', now });
    const res = await transition(t.db, id, 'terminal', 'completed', now, { outputData: { v: 1 }, externalRunId: 'taken' }, { via: 'admin' });
    expect(res.kind).toBe('applied');
    expect(await readRun(t, id)).toMatchObject({ status: 'completed', output_data: { v: 1 }, external_run_id: null });
  });

  it('spec 3 (task runtime): a triggered run whose id is taken still gets its first poll scheduled', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    const now = new Date();
    await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'trigger', now, externalRunId: 'task-run-1' });
    const { id } = await insertRun(t.db, { agentId: a.agent.id, status: 'queued', source: 'trigger', now });
    const nextPoll = new Date(now.getTime() + 60_000);
    const head = await recordTriggered(t.db, id, 'task-run-1', nextPoll, now);
    expect(head).toEqual({ status: 'queued', started_at: null, external_run_id: null });
    expect((await readRun(t, id))!.next_poll_at).toEqual(nextPoll);
  });

  it('insertRun answers the head it wrote without reading it back: equal to the row as stored, milliseconds included', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    const now = new Date('2026-11-27T10:11:12.345Z');
    const startedAt = new Date('2026-11-27T10:11:13.999Z');
    const head = await insertRun(t.db, { agentId: a.agent.id, status: 'running', source: 'ingest', now, startedAt, externalRunId: 'head-check-1' });
    const { rows } = await t.db.query(`SELECT ${HEAD_COLUMNS} FROM runs WHERE id = $1`, [head.id]);
    expect(head).toEqual(rows[0]);
    expect(head.created_at.getTime()).toBe(now.getTime());
  });
});
