// Issue 12 finding 2 (SSRF through the task runtime): a completed Trigger.dev run's `outputPresignedUrl` was fetched
// with the plain runtime client — any address, plain http — and the answer became output_data, went back to the
// caller and out to webhook actions. Now it goes through the SSRF-guarded client (ctx.outbound): https only (plain
// http only to a host on ARS_OUTBOUND_ALLOW_HOSTS), non-public addresses refused after DNS, no redirects, a size cap
// (the adapter-level cases: test/runtimes/trigger-dev-adapter.test.ts). A refused output fails the run with the reason.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { seedWebhookAction } from '../events/outbox-helpers.ts';
import { permissiveLimiter } from '../runtime-api/support.ts';

const clock = new ManualClock(new Date('2026-05-01T10:00:00Z'));
const fake = new TriggerDevFake();
let t: TestApp;
let agent: SeededAgent;
const BIG = { blob: 'x'.repeat(600 * 1024), outputs: 2 }; // over Trigger.dev's 128 KiB: served presigned

beforeAll(async () => {
  await fake.start();
  fake.registerTask('big-task');
  // The fake serves its presigned URLs on http://127.0.0.1: the operator lists it, as for any local receiver.
  t = await createTestApp({ clock, limiter: permissiveLimiter, config: { outboundAllowHosts: ['127.0.0.1'] } });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, target: 'big-task', poll_interval_s: 10 });
  await seedWebhookAction(t, agent.agent.id, 'completed', 'https://hooks.example.com/completed');
});
afterEach(() => {
  fake.presignedOrigin = null;
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

/** A run triggered here whose task finished with a big output, polled once. */
async function polledBigRun(output: unknown = BIG): Promise<{ runId: number; externalId: string }> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: {} });
  expect(res.statusCode).toBe(201);
  const runId = res.json().runId as number;
  const externalId = (await readRun(t, runId))!.external_run_id as string;
  fake.completeRun(externalId, output, new Date(clock.now().getTime() - 1000), clock.now());
  clock.advance(10_000);
  await pollDueRuns(t.ctx);
  return { runId, externalId };
}

async function completedEvents(runId: number): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>("SELECT count(*)::int AS n FROM outbox WHERE run_id = $1 AND event = 'completed'", [runId]);
  return rows[0]!.n;
}

describe('issue 12 finding 2: the presigned output URL goes through the SSRF guard', () => {
  it.each([
    ['a private address', 'https://10.1.2.3', /not public/],
    ['the cloud metadata address', 'https://169.254.169.254', /not public/],
    ['a loopback address not on the allow-list', 'https://127.0.0.2:8443', /not public/],
    ['IPv6 loopback', 'https://[::1]:8443', /not public/],
    ['plain http to a host not on the allow-list', 'http://objects.example.com', /not https/],
  ])('%s: never fetched; the run fails with the reason, no output, no completed event', async (_label, origin, reason) => {
    fake.presignedOrigin = origin;
    const before = fake.requestsTo('/presigned/').length;
    const { runId } = await polledBigRun();
    const run = (await readRun(t, runId))!;
    expect(run).toMatchObject({ status: 'failed', output_data: null, outputs: 0 });
    expect(run.error).toMatch(/^the task's output could not be fetched: /);
    expect(run.error).toMatch(reason);
    expect(fake.requestsTo('/presigned/')).toHaveLength(before);
    expect(await completedEvents(runId)).toBe(0);
  });

  it('a presigned URL on an allow-listed host is fetched (without our key) and becomes the output', async () => {
    const { runId, externalId } = await polledBigRun();
    expect(await readRun(t, runId)).toMatchObject({ status: 'completed', output_data: BIG, outputs: 2 });
    const download = fake.requestsTo(`/presigned/output/${externalId}`).at(-1)!;
    expect(download.headers.authorization).toBeUndefined();
    expect(await completedEvents(runId)).toBe(1);
  });

  it('a redirect from the object store is not followed: the run fails with the reason', async () => {
    fake.setFault({ kind: 'garbage', status: 302, contentType: 'text/plain', body: 'moved' }, { path: '/presigned/', times: 1 });
    const { runId } = await polledBigRun();
    const run = (await readRun(t, runId))!;
    expect(run).toMatchObject({ status: 'failed', output_data: null });
    expect(run.error).toMatch(/redirect, which is never followed/);
  });
});

describe('issue 36 item 1: large outputs as Trigger.dev stores them (superjson or text, from 128 KiB)', () => {
  it('spec 4.2 / part 3: a 200 KiB object is stored as the task returned it, and its `outputs` counted', async () => {
    const output = { report: 'r'.repeat(200 * 1024), outputs: 7 };
    const { runId, externalId } = await polledBigRun(output);
    expect(fake.requestsTo(`/presigned/output/${externalId}`)).toHaveLength(1);
    expect(await readRun(t, runId)).toMatchObject({ status: 'completed', output_data: output, outputs: 7, error: null });
  });

  it('decisions.md "Task return values": a 200 KiB string completes the run, stored as {value}', async () => {
    const text = 's'.repeat(200 * 1024);
    const { runId } = await polledBigRun(text);
    expect(await readRun(t, runId)).toMatchObject({ status: 'completed', output_data: { value: text }, outputs: 0, error: null });
    expect(await completedEvents(runId)).toBe(1);
  });
});
