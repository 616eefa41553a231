// Spec part 1 / part 3 "poll of runtime": a task run followed to its end by status polling against the
// Trigger.dev fake, at its agent's interval, with a ManualClock. Also: two instances never poll one run twice.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { RUN_NOT_VISIBLE_GRACE_MS, runNotFoundReason } from '../../src/runs/poll-run.ts';

let t: TestApp;
const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const fake = new TriggerDevFake();
const n8n = new N8nFake();
let agent: SeededAgent;

beforeAll(async () => {
  await Promise.all([fake.start(), n8n.start()]);
  fake.registerTask('my-target');
  t = await createTestApp({ clock });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, poll_interval_s: 60 });
});
afterAll(async () => {
  await t.close();
  await Promise.all([fake.stop(), n8n.stop()]);
});

async function triggerRun(a: SeededAgent = agent): Promise<{ runId: number; externalId: string }> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, payload: {} });
  expect(res.statusCode).toBe(201);
  const runId = res.json().runId as number;
  return { runId, externalId: (await readRun(t, runId))!.external_run_id as string };
}

const retrieves = (externalId: string) => fake.requestsTo(`/api/v3/runs/${externalId}`, 'GET').length;

describe('spec part 3: status polling of a task run', () => {
  it('spec 8.2: polls at the agent interval; QUEUED → unchanged, EXECUTING → running, COMPLETED → completed with output, outputs, wall-clock duration', async () => {
    const { runId, externalId } = await triggerRun();
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(0); // not due before one interval

    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(1);
    expect((await readRun(t, runId))!.status).toBe('queued');
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(1); // next_poll_at moved one interval on

    fake.setRun(externalId, { status: 'EXECUTING', startedAt: new Date() });
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    let run = (await readRun(t, runId))!;
    expect(run.status).toBe('running');
    expect((run.started_at as Date).toISOString()).toBe(clock.now().toISOString());

    const startedAt = new Date('2026-03-01T09:00:00Z');
    fake.completeRun(externalId, { answer: 42, outputs: 3 }, startedAt, new Date(startedAt.getTime() + 5_250));
    fake.setRun(externalId, { durationMs: 17 }); // compute time, deliberately not the wall clock
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    run = (await readRun(t, runId))!;
    expect(run).toMatchObject({ status: 'completed', output_data: { answer: 42, outputs: 3 }, outputs: 3, duration_ms: 5_250, next_poll_at: null });
    expect((run.completed_at as Date).toISOString()).toBe(clock.now().toISOString());

    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(3); // a terminal run is no longer polled
  });

  it('spec 2.2: a polled terminal run keeps the runtime\'s own start and finish times when they are consistent', async () => {
    const { runId, externalId } = await triggerRun();
    const startedAt = new Date(clock.now().getTime() + 1_000);
    const finishedAt = new Date(startedAt.getTime() + 2_500);
    fake.completeRun(externalId, { ok: true }, startedAt, finishedAt);
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    const run = (await readRun(t, runId))!;
    expect(run).toMatchObject({ status: 'completed', duration_ms: 2_500 });
    expect((run.started_at as Date).toISOString()).toBe(startedAt.toISOString());
    expect((run.completed_at as Date).toISOString()).toBe(finishedAt.toISOString());
  });

  it('spec 2.2: an output whose `outputs` is not a non-negative integer keeps outputs at 0', async () => {
    const { runId, externalId } = await triggerRun();
    fake.completeRun(externalId, { outputs: -2 });
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'completed', outputs: 0, output_data: { outputs: -2 } });
  });

  it('runtimes.md: FAILED stores the task error; EXPIRED, CRASHED and TIMED_OUT are failures with a reason; CANCELED is cancelled', async () => {
    const cases: Array<[Parameters<TriggerDevFake['setRun']>[1], string, unknown]> = [
      [{ status: 'FAILED', error: { message: 'boom', name: 'Error' } }, 'failed', 'boom'],
      [{ status: 'EXPIRED' }, 'failed', expect.stringMatching(/expired/i)],
      [{ status: 'CRASHED' }, 'failed', expect.stringMatching(/crashed/i)],
      [{ status: 'TIMED_OUT' }, 'failed', expect.stringMatching(/maximum duration/i)],
      [{ status: 'CANCELED' }, 'cancelled', null],
    ];
    const runs: Array<{ runId: number; externalId: string }> = [];
    for (let i = 0; i < cases.length; i++) runs.push(await triggerRun());
    cases.forEach(([patch], i) => fake.setRun(runs[i]!.externalId, patch));
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    for (const [i, [, status, error]] of cases.entries()) {
      expect(await readRun(t, runs[i]!.runId)).toMatchObject({ status, error });
    }
  });

  it('issue 36 item 3: a 404 within RUN_NOT_VISIBLE_GRACE_MS of the trigger is replica lag, retried next tick, not a failure', async () => {
    const quick = await seedAgent(t, { orgId: agent.orgId, target: 'my-target', poll_interval_s: 10 });
    await t.db.query('UPDATE agents SET runtime_id = $2 WHERE id = $1', [quick.agent.id, agent.runtimeId]);
    fake.setReplicaLag(1);
    const { runId, externalId } = await triggerRun(quick);
    fake.setReplicaLag(0);
    clock.advance(10_000);
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(1);
    expect((await readRun(t, runId))!.status).toBe('queued');
    fake.setRun(externalId, { status: 'EXECUTING' });
    clock.advance(10_000);
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(2);
    expect((await readRun(t, runId))!.status).toBe('running');
  });

  it('issue 36 item 3: every 404 says x-should-retry; past the grace the run is not there, and the run fails with that reason', async () => {
    const { runId, externalId } = await triggerRun();
    // The runtime no longer has it (another environment's key, a wrong base URL): Trigger.dev answers 404 with
    // x-should-retry: true all the same.
    fake.runs.delete(externalId);
    const raw = await fetch(`${fake.url}/api/v3/runs/${externalId}`, { headers: { authorization: `Bearer ${fake.secretKey}` } });
    expect([raw.status, raw.headers.get('x-should-retry')]).toEqual([404, 'true']);
    expect(RUN_NOT_VISIBLE_GRACE_MS).toBeLessThan(60_000);
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    const run = (await readRun(t, runId))!;
    expect(run.status).toBe('failed');
    expect(run.error).toBe(runNotFoundReason(externalId));
    expect(run.next_poll_at).toBeNull();
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    expect(retrieves(externalId)).toBe(2); // our look above and the one poll: not polled on until a timeout
  });

  it('runtimes.md: a runtime that is down leaves the run as it is; polling resumes next interval', async () => {
    const { runId, externalId } = await triggerRun();
    fake.setFault({ kind: 'garbage', status: 502 }, { path: '/api/v3/runs', times: 1 });
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    expect((await readRun(t, runId))!.status).toBe('queued');
    fake.completeRun(externalId, { ok: true });
    clock.advance(60_000);
    await pollDueRuns(t.ctx);
    expect((await readRun(t, runId))!.status).toBe('completed');
  });

  it('runtimes.md: a completed n8n execution found by polling stores the last node output', async () => {
    const n8nAgent = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'wf', poll_interval_s: 10 });
    const ex = n8n.createExecution({ status: 'running', workflowPath: 'wf' }); // an execution of the agent's workflow
    const run = await insertRun(t.db, {
      agentId: n8nAgent.agent.id, status: 'running', source: 'trigger', now: clock.now(), externalRunId: ex.id,
      startedAt: clock.now(), nextPollAt: clock.now(),
    });
    await pollDueRuns(t.ctx);
    expect((await readRun(t, run.id))!.status).toBe('running');
    n8n.setExecution(ex.id, {
      status: 'success', stoppedAt: new Date(ex.startedAt.getTime() + 1500), lastNodeExecuted: 'Respond',
      runData: { Respond: [{ startTime: Date.now(), data: { main: [[{ json: { done: true, outputs: 2 } }]] } }] },
    });
    clock.advance(10_000);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, run.id)).toMatchObject({ status: 'completed', output_data: { done: true, outputs: 2 }, outputs: 2, duration_ms: 1500 });
  });
});

describe('decisions.md "Scale-out": two instances on one database', () => {
  it.skipIf(!onPostgres)('every due run is polled once per interval, never twice, with two instances polling together', async () => {
    const other = await t.another();
    const runs: Array<{ runId: number; externalId: string }> = [];
    // Two agents: the trigger rate limit is 20 per agent and minute (spec 8.1).
    const second = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, poll_interval_s: 60 });
    const first = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, poll_interval_s: 60 });
    for (let i = 0; i < 15; i++) runs.push(await triggerRun(first), await triggerRun(second));
    const before = new Map(runs.map((r) => [r.externalId, retrieves(r.externalId)]));
    for (let interval = 1; interval <= 3; interval++) {
      clock.advance(60_000);
      // Several passes per instance inside one interval, all at once.
      await Promise.all([pollDueRuns(t.ctx), pollDueRuns(other.app.ctx), pollDueRuns(t.ctx), pollDueRuns(other.app.ctx)]);
      for (const r of runs) expect(retrieves(r.externalId) - before.get(r.externalId)!).toBe(interval);
    }
  });
});
