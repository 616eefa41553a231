import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent } from '../helpers/fixtures.ts';
import { N8nFake, n8nAnswers } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { applyWorkflowAnswer } from '../../src/runs/start-run.ts';
import { NO_ANSWER_REASON } from '../../src/sync/sync-wait.ts';
import type { RunRow } from '../../src/runs/runs-repo.ts';
import {
  callback, expectError, permissiveLimiter, platformRunId, runCount, sleep, taskAgent, waitForRun, workflowAgent,
} from './sync-helpers.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp({ limiter: permissiveLimiter });
});
afterAll(async () => {
  await n8n.stop();
  await trig.stop();
  await t.close();
});

const url = (agentId: number) => `/api/agents/${agentId}/runs/trigger-and-wait`;
const SYNC_200_KEYS = ['agentId', 'completed_at', 'created_at', 'duration_ms', 'error', 'output_data', 'outputs', 'runId', 'started_at', 'status'];

describe('spec 4.2 trigger-and-wait: workflow runtime', () => {
  it('spec 4.2: 200 with exactly the run fields; the workflow answer is output_data and its integer outputs is copied', async () => {
    const a = await workflowAgent(t, n8n, { json: { summary: 'done', outputs: 7 }, executionIdHeader: true }, { default_input: { lang: 'en', keep: 1 } });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { input: { lang: 'de' }, timeoutMs: 10_000 } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(SYNC_200_KEYS);
    expect(body).toMatchObject({ agentId: a.agent.id, status: 'completed', output_data: { summary: 'done', outputs: 7 }, outputs: 7, error: null });
    expect(typeof body.runId).toBe('number');
    expect(body.duration_ms).toEqual(expect.any(Number));
    for (const k of ['started_at', 'completed_at', 'created_at']) expect(new Date(body[k]).toISOString()).toBe(body[k]);
    // spec 4.2: the input is merged over the saved default, the caller's values winning.
    expect(n8n.webhookCalls(a.path)[0]!.body).toMatchObject({ runId: body.runId, input: { lang: 'de', keep: 1 } });
    const run = await readRun(t, body.runId);
    expect(run).toMatchObject({ status: 'completed', outputs: 7, source: 'trigger_and_wait', output_data: { summary: 'done', outputs: 7 } });
    expect(run!.external_run_id).toEqual(expect.any(String));
  });

  it('spec 4.2: a non-integer outputs is dropped (outputs 0) and stays in output_data', async () => {
    const a = await workflowAgent(t, n8n, { json: { outputs: 2.5 } });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} });
    expect(res.json()).toMatchObject({ status: 'completed', outputs: 0, output_data: { outputs: 2.5 } });
  });

  it('spec 4.2: an empty body and no body at all are both a trigger with the default input', async () => {
    const a = await workflowAgent(t, n8n, { json: { ok: true } }, { default_input: { x: 1 } });
    const none = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth });
    expect(none.statusCode, none.body).toBe(200);
    expect(n8n.webhookCalls(a.path)[0]!.body).toMatchObject({ input: { x: 1 } });
  });

  it('runtimes.md: an n8n failure answer (500 "Error in workflow") is 200 with status failed and the reason', async () => {
    const a = await workflowAgent(t, n8n, n8nAnswers.errorInWorkflow());
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'failed', error: 'Error in workflow', output_data: null, outputs: 0 });
  });

  it('runtimes.md: an empty 200 from n8n is a failed run, never success', async () => {
    const a = await workflowAgent(t, n8n, n8nAnswers.emptyOk());
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ status: 'failed', error: expect.stringMatching(/empty body/) });
  });

  it('spec 4.2 / part 3: no sign of life in the window is 504 {error, runId}, the run failed, the held call ended', async () => {
    const a = await workflowAgent(t, n8n, n8nAnswers.never());
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 300 } });
    const body = expectError(res, 504, 'runtime_timeout');
    expect(body.runId).toEqual(expect.any(Number));
    const run = await readRun(t, body.runId as number);
    expect(run).toMatchObject({ status: 'failed', error: NO_ANSWER_REASON });
    expect(run!.completed_at).not.toBeNull();
    // The service hung up on the runtime (decisions.md: the held call is bounded by the window).
    const ex = [...n8n.executions.values()].find((e) => e.workflowPath === a.path)!;
    await waitForRun(t, body.runId as number, () => ex.clientGone);
  });

  it('spec part 3: a late workflow answer cannot resurrect a run failed by a missed window', async () => {
    const a = await workflowAgent(t, n8n, { json: { late: true }, delayMs: 800 });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 200 } });
    const { runId } = expectError(res, 504, 'runtime_timeout') as { runId: number };
    // Whatever the answer does now, the first terminal write stands.
    const late = await applyWorkflowAnswer(t.ctx, runId, { status: 'completed', output: { late: true }, error: null, externalRunId: 'x' }, null);
    expect(late.result?.kind).not.toBe('applied');
    await sleep(900);
    expect(await readRun(t, runId)).toMatchObject({ status: 'failed', output_data: null, error: NO_ANSWER_REASON });
  });

  it('spec 8.3: the agent Max run duration caps timeoutMs (a 60 s request on a 300 ms agent ends as 504)', async () => {
    const a = await workflowAgent(t, n8n, n8nAnswers.never(), { running_timeout_ms: 300 });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 60_000 } });
    expectError(res, 504, 'runtime_timeout');
  });

  it('decisions.md wait window: a workflow that called back (started) gets 202; the held call goes on and ends the run', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const a = await workflowAgent(t, n8n, async (ctx) => {
      await callback(t.app, a, platformRunId(ctx.body), { type: 'started' });
      await gate;
      return { json: { finally: 1 } };
    });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 400 } });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json();
    expect(body).toEqual({ runId: expect.any(Number), agentId: a.agent.id, status: 'running', timedOut: true });
    expect(await readRun(t, body.runId)).toMatchObject({ status: 'running' });
    release();
    expect(await waitForRun(t, body.runId, (r) => r.status === 'completed')).toMatchObject({ output_data: { finally: 1 } });
  });

  it('decisions.md wait window: a workflow waiting for a human (waiting callback) gets 202 with status waiting', async () => {
    const a = await workflowAgent(t, n8n, async (ctx) => {
      await callback(t.app, a, platformRunId(ctx.body), { type: 'waiting', tokenId: ctx.resumeUrl, description: 'approve?' });
      await ctx.waitForResume();
      return { json: { approved: true } };
    });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 400 } });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'waiting', timedOut: true });
  });

  it('spec 4.2: a callback that completes the run ends the wait at once with that run', async () => {
    const a = await workflowAgent(t, n8n, async (ctx) => {
      await callback(t.app, a, platformRunId(ctx.body), { type: 'output', output: { via: 'callback' }, outputs: 3, complete: true });
      return n8nAnswers.never();
    });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 20_000 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', output_data: { via: 'callback' }, outputs: 3 });
  });

  it('spec part 7: runtime invocation failure before the wait is 500 runtime_failed with the run failed', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: await unusedUrl() } });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} });
    const body = expectError(res, 500, 'runtime_failed');
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'failed' });
  });

  it('spec part 7: an unregistered n8n webhook path is the runtime refusing the run (500)', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url }, target: 'nobody-registered-this' });
    expectError(await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} }), 500, 'runtime_failed');
  });
});

describe('spec 4.2 trigger-and-wait: task runtime', () => {
  it('spec 4.2: output_data is the task return value read from the runtime; integer outputs copied', async () => {
    const a = await taskAgent(t, trig, (run) => setTimeout(() => trig.completeRun(run.id, { result: 'ok', outputs: 4 }), 300));
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 15_000 } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(Object.keys(body).sort()).toEqual(SYNC_200_KEYS);
    expect(body).toMatchObject({ status: 'completed', output_data: { result: 'ok', outputs: 4 }, outputs: 4, error: null });
    expect(await readRun(t, body.runId)).toMatchObject({ status: 'completed', output_data: { result: 'ok', outputs: 4 }, outputs: 4 });
  });

  it('spec 4.2: values reported only through the callback do not appear; the return value is stored over them', async () => {
    const a = await taskAgent(t, trig, (run) => {
      const runId = platformRunId(run.payload);
      trig.setRun(run.id, { status: 'EXECUTING', startedAt: new Date() });
      setTimeout(() => {
        void callback(t.app, a, runId, { type: 'output', output: { from: 'callback' }, outputs: 9, complete: true }).then(() =>
          setTimeout(() => trig.completeRun(run.id, { from: 'return value', outputs: 1 }), 300),
        );
      }, 100);
    });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 15_000 } });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body).toMatchObject({ status: 'completed', output_data: { from: 'return value', outputs: 1 }, outputs: 1 });
    expect(await readRun(t, body.runId)).toMatchObject({ output_data: { from: 'return value', outputs: 1 }, outputs: 1 });
  });

  it('spec 4.2: a completion reported on this instance starts the return-value read while its write is still pending', async () => {
    let fakeRunId = '';
    let runId = 0;
    const a = await taskAgent(t, trig, (run) => {
      fakeRunId = run.id;
      runId = platformRunId(run.payload);
    });
    const statusReads = (): number => trig.requestsTo(`/api/v3/runs/${fakeRunId}`, 'GET').length;
    const pending = t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 15_000 } });
    // The wait's first poll (0.5 s ± 25%) comes and goes; the next is at least 0.75 s after it.
    await vi.waitFor(() => expect(statusReads()).toBe(1), { timeout: 5_000 });
    trig.completeRun(fakeRunId, { answer: 42, outputs: 3 });
    // Hold the completion's write (the only guarded UPDATE of this run) until released.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const db = t.ctx.db;
    const query = db.query.bind(db);
    db.query = (async (sql: string, params?: readonly unknown[]) => {
      if (sql.includes('moved AS') && params?.[0] === runId) await held;
      return query(sql, params);
    }) as typeof db.query;
    try {
      let answered = false;
      const cb = callback(t.app, a, runId, { type: 'output', output: { answer: 42, outputs: 3 }, outputs: 3, complete: true }).then(() => (answered = true));
      await vi.waitFor(() => expect(statusReads()).toBe(2), { timeout: 500, interval: 5 });
      expect(answered).toBe(false);
      release();
      await cb;
    } finally {
      db.query = query;
      release();
    }
    const res = await pending;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', output_data: { answer: 42, outputs: 3 }, outputs: 3 });
    expect(statusReads()).toBe(2); // the early read was the return-value read: none after the write
    // The wait's poller stopped with the answer: its next read was due within 1.25 s of its first.
    await new Promise((r) => setTimeout(r, 1_500));
    expect(statusReads()).toBe(2);
  });

  it('issue 15: a wait woken by its own poll\'s write before that write has returned does not read the return value again', async () => {
    let fakeRunId = '';
    let runId = 0;
    // Finished at the runtime before the wait's first poll: that poll writes the terminal state, return value included.
    const a = await taskAgent(t, trig, (run) => {
      fakeRunId = run.id;
      runId = platformRunId(run.payload);
      trig.completeRun(run.id, { answer: 7, outputs: 1 });
    });
    const statusReads = (): number => trig.requestsTo(`/api/v3/runs/${fakeRunId}`, 'GET').length;
    // The write's NOTIFY (carrying its row) reaches this instance before the write's own result does.
    const db = t.ctx.db;
    const query = db.query.bind(db);
    db.query = (async (sql: string, params?: readonly unknown[]) => {
      const res = await query(sql, params);
      const row = res.rows[0] as (RunRow & { notified?: unknown; prior_status?: unknown }) | undefined;
      if (sql.includes('moved AS') && params?.[0] === runId && row?.status === 'completed') {
        const { notified: _n, prior_status: _p, ...written } = row;
        t.ctx.runWatch.publishRun(written as RunRow);
        await sleep(50);
      }
      return res;
    }) as typeof db.query;
    try {
      const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 15_000 } });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'completed', output_data: { answer: 7, outputs: 1 }, outputs: 1 });
    } finally {
      db.query = query;
    }
    expect(statusReads()).toBe(1); // the poll's read, which wrote the return value: none after it
  });

  it('spec 4.2 / part 1: a workflow answer holding U+0000 or a lone surrogate is recorded (not mistaken for no answer)', async () => {
    const a = await workflowAgent(t, n8n, { json: { s: 'a\u0000b', lone: '\ud800' } });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 10_000 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', output_data: { s: 'a\\u0000b', lone: '\ufffd' } });
  });

  it('spec 4.2: a return value holding U+0000 is stored and answered with the NUL made visible (jsonb cannot hold it)', async () => {
    const a = await taskAgent(t, trig, (run) => setTimeout(() => trig.completeRun(run.id, { s: 'a\u0000b' }), 100));
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 15_000 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'completed', output_data: { s: 'a\\u0000b' } });
  });

  it('spec 4.2: a failed task is 200 with status failed and a short reason', async () => {
    const a = await taskAgent(t, trig, (run) => setTimeout(() => trig.setRun(run.id, { status: 'FAILED', error: { message: 'boom' }, startedAt: new Date(), finishedAt: new Date() }), 200));
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 15_000 } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ status: 'failed', error: 'boom' });
  });

  it('decisions.md wait window: a task runtime never gets 504; after the window it is 202 and the run continues', async () => {
    const a = await taskAgent(t, trig);
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 300 } });
    expect(res.statusCode, res.body).toBe(202);
    const body = res.json();
    expect(body).toEqual({ runId: expect.any(Number), agentId: a.agent.id, status: 'queued', timedOut: true });
    expect(await readRun(t, body.runId)).toMatchObject({ status: 'queued', error: null });
  });

  it('spec 4.2: the window is polled: a task seen executing makes the 202 say running', async () => {
    const a = await taskAgent(t, trig, (run) => trig.setRun(run.id, { status: 'EXECUTING', startedAt: new Date() }));
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs: 1_500 } });
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toMatchObject({ status: 'running', timedOut: true });
  });
});

describe('spec 4.2 trigger-and-wait: eligibility and validation', () => {
  it('spec part 7: 403 when allow_external_triggers is off', async () => {
    const a = await workflowAgent(t, n8n, { json: {} }, { allow_external_triggers: false });
    expectError(await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} }), 403, 'not_eligible');
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec part 7: 422 agent_unavailable when the agent is not platform-managed or not active', async () => {
    for (const o of [{ managed_by: 'standalone' as const }, { status: 'paused' as const }, { status: 'archived' as const }]) {
      const a = await workflowAgent(t, n8n, { json: {} }, o);
      expectError(await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: {} }), 422, 'agent_unavailable');
      expect(await runCount(t, a.agent.id)).toBe(0);
    }
  });

  it('spec part 7: 401 for a missing or wrong ingest key', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    const other = await workflowAgent(t, n8n, { json: {} });
    for (const headers of [{}, { authorization: 'Bearer nope' }, other.ingestAuth, a.agentAuth]) {
      expectError(await t.app.inject({ method: 'POST', url: url(a.agent.id), headers, payload: {} }), 401, 'unauthorized');
    }
  });

  it('spec 8.3: timeoutMs must be a positive integer (422 naming the field, nothing written)', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    for (const timeoutMs of [0, -1, 1.5, '100', null, true]) {
      const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { timeoutMs } });
      const body = expectError(res, 422, 'validation_failed');
      expect(body.error).toMatch(/timeoutMs/);
    }
    for (const payload of [{ input: 'x' }, { input: [1] }]) {
      expectError(await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload }), 422, 'validation_failed');
    }
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec 4.2: malformed JSON is 400 invalid_json, nothing written', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: { ...a.ingestAuth, 'content-type': 'application/json' }, payload: '{"input":' });
    expectError(res, 400, 'invalid_json');
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec 4.2: userId of a member sets created_by; unknown or malformed values are dropped silently', async () => {
    const a = await workflowAgent(t, n8n, { json: {} });
    const { rows } = await t.db.query<{ id: string }>(
      `INSERT INTO users (id, email) VALUES (gen_random_uuid(), 'm' || floor(random() * 1e9)::text || '@x.test') RETURNING id`,
    );
    await t.db.query(`INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, 'member')`, [a.orgId, rows[0]!.id]);
    const member = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { userId: rows[0]!.id } });
    expect((await readRun(t, member.json().runId))!.created_by).toBe(rows[0]!.id);
    for (const userId of ['00000000-0000-4000-8000-000000000000', 'not-a-uuid']) {
      const res = await t.app.inject({ method: 'POST', url: url(a.agent.id), headers: a.ingestAuth, payload: { userId } });
      expect(res.statusCode).toBe(200);
      expect((await readRun(t, res.json().runId))!.created_by).toBeNull();
    }
  });
});
