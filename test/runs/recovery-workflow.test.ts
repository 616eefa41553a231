// Issue 11 item 1 (decisions.md "Recovering lost runs"), workflow runtime: a run whose held n8n call this instance
// handed back is found in n8n's executions by its payload — running ones through `status=running`, finished ones
// through the plain list — and never another deployment's execution of the same run id. In-process, ManualClock,
// the n8n fake (shapes captured from 2.8.4 and 2.41.1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { prepareRun } from '../../src/runs/start-run.ts';
import { isOverLimit } from '../../src/rate-limits/rate-guard.ts';
import { HELD_CALL_LOST_NOTE, RECOVERED_FIRST_POLL_S, recoverLostRuns } from '../../src/runs/recover-run.ts';
import { pollDueRuns } from '../../src/background/poller.ts';

let t: TestApp;
const clock = new ManualClock(new Date());
const n8n = new N8nFake({ version: '2.41.1' });
let agent: SeededAgent;
let release: (() => void) | null = null;

beforeAll(async () => {
  await n8n.start();
  // The workflow answers when the test says so: a run can be caught while n8n still runs it.
  n8n.registerWorkflow('wf-rec', () => new Promise((resolve) => (release = () => resolve({ json: { done: true } }))));
  t = await createTestApp({ clock });
  agent = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: n8n.url, apiKey: n8n.apiKey }, target: 'wf-rec', poll_interval_s: 300 });
});
afterAll(async () => {
  release?.();
  await t.close();
  await n8n.stop();
});

/** A run sent to n8n by a call this instance then lost (its answer will never be read here). */
async function sentAndLost(deploymentId?: string) {
  const p = await prepareRun(t.ctx, { agent: agent.agent, input: {}, createdBy: null, source: 'trigger' });
  if (isOverLimit(p)) throw new Error('over limit');
  const abort = new AbortController();
  const payload = deploymentId ? { ...p.payload, deploymentId } : p.payload;
  const res = await p.adapter.invoke({ runtime: p.runtime, target: 'wf-rec', payload, signal: abort.signal });
  expect(res.ok).toBe(true);
  abort.abort(); // the caller hangs up, as a killed service would: n8n runs on
  return p.run.id;
}

describe('issue 11: recovering workflow runs from n8n\'s records', () => {
  it('a running execution is found (status=running), the run follows it, and the poller ends it from the record 10 s later (not a whole 300 s interval)', async () => {
    const runId = await sentAndLost();
    clock.advance(t.ctx.config.runLeaseMs + 1);
    const [outcome] = await recoverLostRuns(t.ctx);
    expect(outcome).toMatchObject({ runId, kind: 'adopted', outcome: { kind: 'started' } });
    const executionId = (outcome as { externalRunId: string }).externalRunId;
    expect(n8n.requestsTo('/api/v1/executions', 'GET').some((r) => r.query.get('status') === 'running')).toBe(true);
    const adopted = await readRun(t, runId);
    expect(adopted).toMatchObject({ status: 'running', external_run_id: executionId, runtime_note: HELD_CALL_LOST_NOTE });
    // Its held call would have told at once how it ended: the first poll is at most 10 s away, whatever the interval.
    expect(new Date(adopted!.next_poll_at as string | Date).getTime() - clock.now().getTime()).toBe(RECOVERED_FIRST_POLL_S * 1000);

    release!();
    await new Promise((r) => setTimeout(r, 100));
    expect(n8n.execution(executionId).status).toBe('success');
    clock.advance(10_000);
    await pollDueRuns(t.ctx);
    expect(await readRun(t, runId)).toMatchObject({ status: 'completed', output_data: { done: true } });
  });

  it('another deployment\'s execution with the same run id is never adopted', async () => {
    const runId = await sentAndLost('00000000-0000-4000-8000-00000000000b');
    clock.advance(t.ctx.config.runLeaseMs + 1);
    const outcomes = await recoverLostRuns(t.ctx);
    expect(outcomes.find((o) => o.runId === runId)?.kind).toBe('not_found');
    expect((await readRun(t, runId))!.external_run_id).toBeNull();
  });
});
