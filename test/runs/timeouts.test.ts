// Spec part 3 rules 2–5 and 8.2: queued and running timeouts, driven by a ManualClock and one sweep (or one
// poll) at a time. Exact reason strings.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { applyWorkflowAnswer } from '../../src/runs/start-run.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { sweepTimeouts } from '../../src/background/timeout-sweeper.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';

const QUEUED_REASON = 'Run never started (queued timeout exceeded)';
const RUNNING_REASON = 'Run exceeded running timeout';
const MIN = 60_000;

let t: TestApp;
const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const fake = new TriggerDevFake();
const n8n = new N8nFake();
let agent: SeededAgent; // running timeout 5 minutes, polled every 60 s

beforeAll(async () => {
  await Promise.all([fake.start(), n8n.start()]);
  fake.registerTask('my-target');
  t = await createTestApp({ clock });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, running_timeout_ms: 5 * MIN, poll_interval_s: 60 });
});
afterAll(async () => {
  await t.close();
  await Promise.all([fake.stop(), n8n.stop()]);
});

async function queuedRun(): Promise<number> {
  const run = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now: clock.now() });
  return run.id;
}

async function startedRun(): Promise<number> {
  const id = await queuedRun();
  expect((await transition(t.db, id, 'started', 'running', clock.now(), {}, { via: 'admin' })).kind).toBe('applied');
  return id;
}

/** A triggered task run at the fake, so the poller has something to ask. */
async function triggered(): Promise<{ runId: number; externalId: string }> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: {} });
  expect(res.statusCode).toBe(201);
  const runId = res.json().runId as number;
  return { runId, externalId: (await readRun(t, runId))!.external_run_id as string };
}

describe('spec 8.2: queued → failed after 10 minutes (deployment-wide)', () => {
  it('spec part 3: fails a run queued over 10 minutes with the exact reason; one just under stays queued', async () => {
    const old = await queuedRun();
    clock.advance(MIN);
    const young = await queuedRun();
    clock.advance(9 * MIN + 1);
    const swept = await sweepTimeouts(t.ctx);
    expect(swept.queued.map((r) => r.id)).toContain(old);
    expect(swept.queued.map((r) => r.id)).not.toContain(young);
    const run = (await readRun(t, old))!;
    expect(run).toMatchObject({ status: 'failed', error: QUEUED_REASON, started_at: null, next_poll_at: null });
    expect((run.completed_at as Date).toISOString()).toBe(clock.now().toISOString());
    expect(run.duration_ms).toBe(10 * MIN + 1);
    expect((await readRun(t, young))!.status).toBe('queued');
    clock.advance(MIN);
    await sweepTimeouts(t.ctx);
    expect(await readRun(t, young)).toMatchObject({ status: 'failed', error: QUEUED_REASON });
  });

  it('spec 8.2: the per-agent Max run duration does not extend the queued window (rule 2)', async () => {
    const long = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, running_timeout_ms: 86_400_000 });
    const run = await insertRun(t.db, { agentId: long.agent.id, status: 'queued', source: 'trigger', now: clock.now() });
    clock.advance(10 * MIN + 1);
    await sweepTimeouts(t.ctx);
    expect(await readRun(t, run.id)).toMatchObject({ status: 'failed', error: QUEUED_REASON });
  });

  it('spec part 3: a terminal run is never touched by the sweeper (first terminal write wins)', async () => {
    const id = await queuedRun();
    await transition(t.db, id, 'terminal', 'completed', clock.now(), { outputData: { ok: 1 } }, { via: 'admin' });
    const before = (await readRun(t, id))!;
    clock.advance(11 * MIN);
    await sweepTimeouts(t.ctx);
    expect(await readRun(t, id)).toEqual(before);
  });
});

describe('spec 8.2: running → failed after the running timeout, measured from started_at', () => {
  it('spec part 3 rule 2: queued time does not count toward the running timeout', async () => {
    const id = await queuedRun();
    clock.advance(9 * MIN); // queued for 9 minutes, under the queued timeout
    await transition(t.db, id, 'started', 'running', clock.now(), {}, { via: 'admin' });
    clock.advance(4 * MIN); // 13 minutes since creation, 4 since start: within 5 minutes
    await sweepTimeouts(t.ctx);
    expect((await readRun(t, id))!.status).toBe('running');
    clock.advance(MIN + 1);
    const swept = await sweepTimeouts(t.ctx);
    expect(swept.running.map((r) => r.id)).toContain(id);
    const run = (await readRun(t, id))!;
    expect(run).toMatchObject({ status: 'failed', error: RUNNING_REASON, duration_ms: 5 * MIN + 1 });
  });

  it('spec part 3 rule 3: the sweeper never fails a waiting run, however long it waits', async () => {
    const id = await startedRun();
    await transition(t.db, id, 'waiting', 'waiting', clock.now(), { waitState: { tokenId: 'w1', description: 'd', url: null, output: null } }, { via: 'admin' });
    clock.advance(60 * MIN);
    await sweepTimeouts(t.ctx);
    expect((await readRun(t, id))!.status).toBe('waiting');
  });

  it('spec part 3 rule 3: a run paused past its Max run duration is failed on the first poll after it resumes', async () => {
    const { runId, externalId } = await triggered();
    fake.setRun(externalId, { status: 'EXECUTING' });
    clock.advance(MIN);
    await pollDueRuns(t.ctx);
    expect((await readRun(t, runId))!.status).toBe('running');
    await transition(t.db, runId, 'waiting', 'waiting', clock.now(), { waitState: { tokenId: 'w2', description: 'd', url: null, output: null } }, { via: 'admin' });
    fake.setRun(externalId, { status: 'WAITING' }); // paused upstream too
    clock.advance(10 * MIN);
    await pollDueRuns(t.ctx);
    await sweepTimeouts(t.ctx);
    expect((await readRun(t, runId))!.status).toBe('waiting');

    fake.setRun(externalId, { status: 'EXECUTING' }); // resumed upstream
    clock.advance(MIN);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'failed', error: RUNNING_REASON });
  });

  it('spec part 3 rule 4: a task that says waiting but still executes upstream is subject to the running timeout', async () => {
    const { runId, externalId } = await triggered();
    fake.setRun(externalId, { status: 'EXECUTING' });
    clock.advance(MIN);
    await pollDueRuns(t.ctx);
    await transition(t.db, runId, 'waiting', 'waiting', clock.now(), { waitState: { tokenId: 'w3', description: 'd', url: null, output: null } }, { via: 'admin' });
    clock.advance(4 * MIN);
    await pollDueRuns(t.ctx); // 4 minutes since start: within the limit
    expect((await readRun(t, runId))!.status).toBe('waiting');
    clock.advance(MIN + 1);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'failed', error: RUNNING_REASON });
  });

  it('spec part 3: a running run over its timeout is also failed by the poll, before any sweep', async () => {
    const { runId, externalId } = await triggered();
    fake.setRun(externalId, { status: 'EXECUTING' });
    clock.advance(MIN);
    await pollDueRuns(t.ctx);
    clock.advance(5 * MIN + 1);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'failed', error: RUNNING_REASON });
  });

  it('spec part 3 rule 5: a run Trigger.dev expired in its own queue is failed by the poll', async () => {
    const { runId, externalId } = await triggered();
    expect((fake.triggers().at(-1)!.body as { options: { ttl: string } }).options.ttl).toBe('10m');
    fake.setRun(externalId, { status: 'EXPIRED' });
    clock.advance(MIN);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'failed', error: expect.stringMatching(/expired/i) });
  });

  it('decisions.md "Events": a timeout queues the failed webhook action in the outbox like any transition', async () => {
    const withAction = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey } });
    await t.db.query(`INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc) VALUES (gen_random_uuid(), $1, 'failed', 'https://example.test/h', 'x')`, [withAction.agent.id]);
    const run = await insertRun(t.db, { agentId: withAction.agent.id, status: 'queued', source: 'trigger', now: clock.now() });
    clock.advance(10 * MIN + 1);
    await sweepTimeouts(t.ctx);
    const { rows } = await t.db.query<{ event: string; snapshot: { status: string; error: string } }>('SELECT event, snapshot FROM outbox WHERE run_id = $1', [run.id]);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ event: 'failed', snapshot: { status: 'failed', error: QUEUED_REASON } });
  });
});

describe('spec part 3: a late workflow answer cannot resurrect a timed-out run', () => {
  it('spec part 3: the queued timeout fails a silent n8n run, ends the held call, and a late answer changes nothing', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    n8n.registerWorkflow('wf-slow', async () => {
      await gate;
      return { json: { late: true }, executionIdHeader: true };
    });
    const wf = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'wf-slow' });
    const res = await t.app.inject({ method: 'POST', url: `/api/agents/${wf.agent.id}/runs/trigger`, headers: wf.ingestAuth, payload: {} });
    expect(res.statusCode).toBe(201);
    const runId = res.json().runId as number;
    const held = t.ctx.heldCalls.get(runId)!;
    clock.advance(10 * MIN + 1);
    await sweepTimeouts(t.ctx);
    const settlement = await held.settled;
    expect(settlement).toMatchObject({ answer: { aborted: true }, result: null });
    release();
    const after = (await readRun(t, runId))!;
    expect(after).toMatchObject({ status: 'failed', error: QUEUED_REASON });

    // The same answer arriving on an instance that still held the call: a silent no-op.
    const late = await applyWorkflowAnswer(t.ctx, runId, { status: 'completed', output: { late: true }, error: null, externalRunId: '1' }, null);
    expect(late.result?.kind).toBe('backward');
    expect(await readRun(t, runId)).toEqual(after);
  });
});
