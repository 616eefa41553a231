// Issue 36 item 2 (spec part 3 "(none) → queued, runtime invoked"; decisions.md "Recovering lost runs"): a trigger
// whose answer was lost after Trigger.dev created the run used to fail the run at once while the task ran on. Now
// the trigger is repeated with its idempotency key for a bounded time; when even that gets no answer the run stays
// queued and recovery finds it by its tag — never failed while it may run. A 429 created nothing: it fails the run
// with its reason. In-process, against the Trigger.dev fake, with a short answer window.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { createRuntimeRegistry } from '../../src/runtimes/runtime-registry.ts';
import { RuntimeHttp } from '../../src/runtimes/http.ts';
import { TriggerDevAdapter } from '../../src/runtimes/trigger-dev-adapter.ts';
import { recoverLostRuns } from '../../src/runs/recover-run.ts';
import { permissiveLimiter } from '../runtime-api/support.ts';

const clock = new ManualClock(new Date('2026-06-01T10:00:00Z'));
const fake = new TriggerDevFake();
const http = new RuntimeHttp({ timeouts: { connectMs: 500, headersMs: 2_000, bodyMs: 2_000 } });
let t: TestApp;
let agent: SeededAgent;

beforeAll(async () => {
  await fake.start();
  fake.registerTask('task-a');
  const runtimes = createRuntimeRegistry({ adapters: { task: new TriggerDevAdapter({ http, answerWindowMs: 1_500 }) } });
  t = await createTestApp({ clock, runtimes, limiter: permissiveLimiter });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, target: 'task-a', poll_interval_s: 10 });
});
afterEach(() => fake.clearFaults());
afterAll(async () => {
  await t.close();
  await http.close();
  await fake.stop();
});

const trigger = () => t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: { input: { q: 1 } } });

describe('issue 36 item 2: a lost trigger answer never fails a run that may run', () => {
  it('one lost answer: the repeat with the same key gets the same run; one run at Trigger.dev, recorded here', async () => {
    fake.loseTriggerAnswers(1, 'reset');
    const res = await trigger();
    expect(res.statusCode, res.body).toBe(201);
    const run = (await readRun(t, res.json().runId))!;
    const tagged = fake.runsTagged(`ars_run:${t.ctx.deploymentId}:${run.id}`);
    expect(tagged).toHaveLength(1);
    expect(run).toMatchObject({ status: 'queued', external_run_id: tagged[0]!.id, error: null });
  });

  it('every answer lost for the whole window: 201 queued, not failed; recovery then adopts the one run by its tag', async () => {
    fake.loseTriggerAnswers(50, 'bad-gateway');
    const res = await trigger();
    expect(res.statusCode, res.body).toBe(201);
    const runId = res.json().runId as number;
    expect(await readRun(t, runId)).toMatchObject({ status: 'queued', external_run_id: null, error: null });
    const tagged = fake.runsTagged(`ars_run:${t.ctx.deploymentId}:${runId}`);
    expect(tagged).toHaveLength(1); // the task runs at Trigger.dev: our run must not be failed
    fake.clearFaults();

    // The lease was handed back at once: the next recovery pass looks the run up, without waiting for the lease.
    const outcomes = await recoverLostRuns(t.ctx);
    expect(outcomes.find((o) => o.runId === runId)).toMatchObject({ kind: 'adopted', externalRunId: tagged[0]!.id });
    expect(await readRun(t, runId)).toMatchObject({ status: 'queued', external_run_id: tagged[0]!.id });
    expect(fake.runsTagged(`ars_run:${t.ctx.deploymentId}:${runId}`)).toHaveLength(1);
  });

  it('a 429 whose reset is far: the run fails with the rate limit and its reset time; nothing runs at Trigger.dev', async () => {
    const resetAt = Date.now() + 120_000;
    fake.rateLimit(1, resetAt);
    const res = await trigger();
    expect(res.statusCode).toBe(500);
    expect(res.json().code).toBe('runtime_failed');
    const run = (await readRun(t, res.json().runId as number))!;
    expect(run.status).toBe('failed');
    expect(run.error).toBe(`runtime refused the run: Trigger.dev trigger: rate limited by the task runtime until ${new Date(resetAt).toISOString()}`);
    expect(res.json().error).toContain(run.error);
    expect(fake.runs.size).toBe(2); // only the two runs of the tests above
  });
});
