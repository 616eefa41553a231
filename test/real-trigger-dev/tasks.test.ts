// Issue 36 Deliver 1, against a REAL Trigger.dev (.ci/real-trigger-dev.sh: v4.4.3 built from its source, the CLI's
// dev worker running test/real-trigger-dev/tasks): every path of the task runtime the contract has — a task's
// output of each kind and size (spec part 3 "poll of runtime", issue 36 item 1), a failure's own text, spec 4.2's
// /trigger-and-wait, cancel (decisions.md "Run lifecycle"), a human-in-the-loop pause resumed through spec 4.9's
// /waitpoint, a signed alert (spec part 1), and idempotent triggering (decisions.md "Idempotency keys").
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  alertChannelTo, createAgent, eventually, NO_REAL_TRIGGER_DEV, runsListWorks, setTaskKeys, startServiceOnTriggerDev, tdFinished, tdRun, tdRunsTagged,
  TD_VERSION, type CreatedAgent, type ServiceOnTriggerDev,
} from './real-trigger-dev.ts';

const ALERT_SECRET = `whsec_ars_${Date.now()}`;
let s: ServiceOnTriggerDev;
const agents: Record<string, CreatedAgent> = {};

// eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field in the tests
const adminRun = async (id: number): Promise<any> => (await s.service.api('GET', `/api/admin/runs/${id}`)).json;
const ACTIVE = ['queued', 'running', 'waiting'];
const ended = (id: number, ms = 60_000) => eventually(() => adminRun(id), (r) => !ACTIVE.includes(r.status), ms);

async function trigger(task: string, input: Record<string, unknown> = {}, headers: Record<string, string> = {}): Promise<{ runId: number; status: number }> {
  const res = await fetch(`${s.service.url}/api/agents/${agents[task]!.id}/runs/trigger`, {
    method: 'POST',
    headers: { authorization: agents[task]!.ingest, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ input }),
  });
  const body = (await res.json()) as { runId: number };
  expect(res.status, JSON.stringify(body)).toBe(201);
  return { runId: body.runId, status: res.status };
}

describe.skipIf(NO_REAL_TRIGGER_DEV)(`issue 36: the task runtime against a real Trigger.dev ${TD_VERSION}`, () => {
  beforeAll(async () => {
    s = await startServiceOnTriggerDev({}, { alert_secret: ALERT_SECRET });
    for (const task of ['ars-echo', 'ars-big-object', 'ars-big-string', 'ars-small-string', 'ars-fail', 'ars-slow', 'ars-wait']) {
      agents[task] = await createAgent(s, task, task, { poll_interval_s: 10 });
    }
    // The alert test's agent polls once an hour: only the alert can end its run within the test.
    agents['ars-fail-alerted'] = await createAgent(s, 'ars-fail-alerted', 'ars-fail', { poll_interval_s: 3600 });
    setTaskKeys({ 'ars-wait': agents['ars-wait']!.agentKey });
  }, 240_000);

  afterAll(async () => {
    await s?.service.stop();
    await s?.storage.drop();
  });

  it('spec part 3: a small object output completes the run by polling, with output_data and outputs', async () => {
    const { runId } = await trigger('ars-echo', { q: 'hello' });
    const run = await ended(runId);
    expect(run).toMatchObject({ status: 'completed', output_data: { echo: { q: 'hello' }, runId, outputs: 2 }, outputs: 2, error: null });
    expect((await tdRun(run.external_run_id)).status).toBe('COMPLETED');
  }, 90_000);

  it('issue 36 item 1: a 200 KiB object (offloaded: superjson {json} behind outputPresignedUrl) is stored as returned, outputs taken', async () => {
    const { runId } = await trigger('ars-big-object');
    const run = await ended(runId);
    const remote = await tdRun(run.external_run_id);
    expect(remote.output).toBeUndefined();
    expect(remote.outputPresignedUrl).toMatch(/^http:\/\/127\.0\.0\.1:9005\//);
    const stored = await fetch(remote.outputPresignedUrl!);
    expect(stored.headers.get('content-type')).toMatch(/^application\/super\+json/);
    expect(Object.keys((await stored.json()) as object)).toContain('json');
    expect(run).toMatchObject({ status: 'completed', outputs: 5, error: null });
    expect(run.output_data).toEqual({ runId, outputs: 5, blob: 'o'.repeat(200 * 1024) });
  }, 90_000);

  it('issue 36 item 1: a 200 KiB string (offloaded as text/plain) completes the run, stored as {value}', async () => {
    const { runId } = await trigger('ars-big-string');
    const run = await ended(runId);
    const remote = await tdRun(run.external_run_id);
    expect(remote.status).toBe('COMPLETED');
    expect((await fetch(remote.outputPresignedUrl!)).headers.get('content-type')).toMatch(/^text\/plain/);
    expect(run).toMatchObject({ status: 'completed', output_data: { value: 's'.repeat(200 * 1024) }, outputs: 0, error: null });
  }, 90_000);

  it('decisions.md "Task return values": a small string return value (inline) is stored as {value}', async () => {
    const { runId } = await trigger('ars-small-string');
    expect(await ended(runId)).toMatchObject({ status: 'completed', output_data: { value: 'done' }, error: null });
  }, 90_000);

  it('spec part 3: a failing task fails the run with the task\'s own error text', async () => {
    const { runId } = await trigger('ars-fail', { reason: 'no credits' });
    const run = await ended(runId);
    expect(run).toMatchObject({ status: 'failed', error: 'Deliberate failure: no credits', output_data: null });
  }, 90_000);

  it('spec 4.2: /trigger-and-wait answers 200 with the task\'s return value', async () => {
    const t0 = Date.now();
    const res = await s.service.api('POST', `/api/agents/${agents['ars-echo']!.id}/runs/trigger-and-wait`, { input: { q: 'sync' }, timeoutMs: 60_000 }, agents['ars-echo']!.ingest);
    console.log(`[real Trigger.dev ${TD_VERSION}] /trigger-and-wait answered ${res.status} in ${Date.now() - t0} ms`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toMatchObject({ status: 'completed', output_data: { echo: { q: 'sync' }, outputs: 2 }, outputs: 2, error: null });
  }, 90_000);

  it('decisions.md "Run lifecycle": an admin cancel reaches the run at Trigger.dev (CANCELED)', async () => {
    const { runId } = await trigger('ars-slow', { seconds: 120 });
    const started = await eventually(() => adminRun(runId), (r) => r.external_run_id !== null && r.status === 'running', 40_000);
    expect(started.status).toBe('running');
    const res = await s.service.api('POST', `/api/admin/runs/${runId}/cancel`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json.status).toBe('cancelled');
    const remote = await tdFinished(started.external_run_id, 30_000);
    expect(remote.status).toBe('CANCELED');
  }, 90_000);

  it('spec 4.9: a task waiting on a token (tagged with its run) is resumed through /waitpoint and completes with the decision', async () => {
    const { runId } = await trigger('ars-wait');
    const waiting = await eventually(() => adminRun(runId), (r) => r.status === 'waiting' || !ACTIVE.includes(r.status), 60_000);
    expect(waiting.status).toBe('waiting');
    // Dev mode never suspends a run: Trigger.dev reports it EXECUTING, not WAITING, while it waits (README).
    const during = await tdRun(waiting.external_run_id);
    console.log(`[real Trigger.dev ${TD_VERSION}] a run waiting on a token reports ${during.status}, isWaiting ${String(during.isWaiting)}`);
    const res = await s.service.api('POST', `/api/runs/${runId}/waitpoint`, { payload: { approved: true } }, `Bearer ${agents['ars-wait']!.agentKey}`);
    expect(res.status, JSON.stringify(res.json)).toBe(200);
    expect(res.json).toEqual({ ok: true });
    const run = await ended(runId);
    expect(run).toMatchObject({ status: 'completed', output_data: { decision: { approved: true }, outputs: 1 }, outputs: 1 });
  }, 120_000);

  it('decisions.md "Idempotency keys": a repeated /trigger with the same key is the same run; Trigger.dev holds one run for it', async () => {
    const key = `idem-${Date.now()}`;
    const first = await trigger('ars-echo', { q: 'once' }, { 'idempotency-key': key });
    const second = await trigger('ars-echo', { q: 'once' }, { 'idempotency-key': key });
    expect(second.runId).toBe(first.runId);
    const run = await ended(first.runId);
    expect(run.status).toBe('completed');
    const tag = (await tdRun(run.external_run_id)).tags.find((t) => t.startsWith('ars_run:') && t.endsWith(`:${first.runId}`));
    expect(tag).toBeDefined();
    if (await runsListWorks()) expect((await tdRunsTagged(tag!)).map((r) => r.id)).toEqual([run.external_run_id]);
  }, 90_000);

  it('spec part 1: a signed alert.run.failed from Trigger.dev ends the run with the task\'s error text, before any poll', async () => {
    await alertChannelTo(`${s.service.url}/api/runtimes/${s.runtimeId}/alerts`, ALERT_SECRET);
    const before = Date.now();
    const res = await fetch(`${s.service.url}/api/agents/${agents['ars-fail-alerted']!.id}/runs/trigger`, {
      method: 'POST', headers: { authorization: agents['ars-fail-alerted']!.ingest, 'content-type': 'application/json' }, body: JSON.stringify({ input: { reason: 'alerted' } }),
    });
    const runId = ((await res.json()) as { runId: number }).runId;
    const run = await ended(runId, 90_000);
    console.log(`[real Trigger.dev ${TD_VERSION}] the alert ended the run ${Date.now() - before} ms after the trigger`);
    expect(run).toMatchObject({ status: 'failed', error: 'Deliberate failure: alerted' });
    expect(run.timeline.map((e: { via: string }) => e.via)).toContain('alert');
  }, 120_000);
});
