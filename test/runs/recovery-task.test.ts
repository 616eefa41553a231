// Issue 11 item 1 (decisions.md "Recovering lost runs"), task runtime: a run whose trigger reached Trigger.dev but
// whose bookkeeping was lost is found there by its deployment-unique tag and followed to its end; another
// deployment's run with the same run id is never adopted. Issue 36 item 4: Trigger.dev's runs list lags, so a run
// it does not list is looked for until the queued timeout, never declared "never arrived". In-process, with a
// ManualClock and the Trigger.dev fake.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { prepareRun } from '../../src/runs/start-run.ts';
import { isOverLimit } from '../../src/rate-limits/rate-guard.ts';
import { recoverLostRuns, TASK_NOT_LISTED_NOTE, TASK_RECOVERED_NOTE, taskLookupFailedNote } from '../../src/runs/recover-run.ts';
import { pollDueRuns } from '../../src/background/poller.ts';

let t: TestApp;
const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const fake = new TriggerDevFake();
let agent: SeededAgent;

beforeAll(async () => {
  await fake.start();
  fake.registerTask('task-a');
  t = await createTestApp({ clock });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, target: 'task-a', poll_interval_s: 30 });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

/** A run inserted as /trigger inserts it (with its lease), and its payload, but no bookkeeping after that. */
async function prepared() {
  const p = await prepareRun(t.ctx, { agent: agent.agent, input: { q: 1 }, createdBy: null, source: 'trigger' });
  if (isOverLimit(p)) throw new Error('over limit');
  return p;
}

const lapse = () => clock.advance(t.ctx.config.runLeaseMs + 1);

describe('issue 11: recovering task runs whose bookkeeping was lost', () => {
  it('a trigger that reached the runtime is found by its tag, its id recorded, and the poller finishes it', async () => {
    const p = await prepared();
    const sent = await p.adapter.invoke({ runtime: p.runtime, target: 'task-a', payload: p.payload });
    expect(sent.ok).toBe(true);
    const externalId = sent.ok ? sent.value.externalRunId! : '';

    expect((await recoverLostRuns(t.ctx)).filter((o) => o.kind !== 'not_found')).toEqual([]); // lease still alive
    lapse();
    const [outcome] = await recoverLostRuns(t.ctx);
    expect(outcome).toMatchObject({ kind: 'adopted', externalRunId: externalId, outcome: { kind: 'unchanged' } });
    let run = (await readRun(t, p.run.id))!;
    expect(run).toMatchObject({ status: 'queued', external_run_id: externalId, invoke_lease_until: null, runtime_note: TASK_RECOVERED_NOTE });
    expect(await recoverLostRuns(t.ctx)).toEqual([]); // adopted: nothing left to recover

    fake.completeRun(externalId, { answer: 42 }, new Date(clock.now().getTime() - 1000), clock.now());
    clock.advance(30_000);
    await pollDueRuns(t.ctx);
    run = (await readRun(t, p.run.id))!;
    expect(run).toMatchObject({ status: 'completed', output_data: { answer: 42 } });
  });

  it('issue 12: a run whose recorded id names another task\'s run is failed, never finished from that run', async () => {
    fake.registerTask('task-b');
    const p = await prepared();
    const other = await p.adapter.invoke({ runtime: p.runtime, target: 'task-b', payload: { runId: 999_999, input: {} } });
    const otherId = other.ok ? other.value.externalRunId! : '';
    fake.completeRun(otherId, { not: 'ours' });
    await t.db.query('UPDATE runs SET external_run_id = $2 WHERE id = $1', [p.run.id, otherId]);
    lapse();
    const outcomes = await recoverLostRuns(t.ctx);
    expect(outcomes.find((o) => o.runId === p.run.id)).toMatchObject({ kind: 'foreign', outcome: { kind: 'foreign' } });
    const run = (await readRun(t, p.run.id))!;
    expect(run).toMatchObject({ status: 'failed', output_data: null, runtime_note: null });
    expect(run.error).toMatch(/belongs to another task, not to this agent's task "task-a"/);
  });

  it('issue 36 item 4: a run the list does not show (yet) is not failed as "never arrived"; it is adopted once the list catches up', async () => {
    const p = await prepared();
    fake.listLagMs = 60 * 60_000; // the list (ClickHouse) behind the main database
    const sent = await p.adapter.invoke({ runtime: p.runtime, target: 'task-a', payload: p.payload });
    const externalId = sent.ok ? sent.value.externalRunId! : '';
    lapse();
    for (let i = 0; i < 30; i++) {
      // Five minutes of passes, far past the two minutes after which the run used to be failed.
      expect((await recoverLostRuns(t.ctx)).find((o) => o.runId === p.run.id)?.kind ?? 'not_claimed').toMatch(/not_found|not_claimed/);
      clock.advance(10_001);
    }
    expect(await readRun(t, p.run.id)).toMatchObject({ status: 'queued', error: null, external_run_id: null, runtime_note: TASK_NOT_LISTED_NOTE });
    fake.listLagMs = 0;
    const outcomes = await recoverLostRuns(t.ctx);
    expect(outcomes.find((o) => o.runId === p.run.id)).toMatchObject({ kind: 'adopted', externalRunId: externalId });
    expect(await readRun(t, p.run.id)).toMatchObject({ status: 'queued', external_run_id: externalId, runtime_note: TASK_RECOVERED_NOTE });
  });

  it('issue 36 item 4: a trigger that never arrived stays queued for its queued timeout; the run detail says why', async () => {
    const p = await prepared();
    lapse();
    const mine = async (): Promise<string | undefined> => (await recoverLostRuns(t.ctx)).find((o) => o.runId === p.run.id)?.kind;
    expect(await mine()).toBe('not_found');
    clock.advance(180_000);
    expect(await mine()).toBe('not_found');
    expect(await readRun(t, p.run.id)).toMatchObject({ status: 'queued', runtime_note: TASK_NOT_LISTED_NOTE });
  });

  it('another deployment\'s run with the same run id at the same runtime is never adopted', async () => {
    const p = await prepared();
    const foreign = { ...p.payload, deploymentId: '00000000-0000-4000-8000-000000000000' };
    expect((await p.adapter.invoke({ runtime: p.runtime, target: 'task-a', payload: foreign })).ok).toBe(true);
    lapse();
    expect((await recoverLostRuns(t.ctx)).find((o) => o.runId === p.run.id)?.kind).toBe('not_found');
    expect((await readRun(t, p.run.id))!.external_run_id).toBeNull();
  });

  it('a runtime that is down is asked again later; the run is left as it is', async () => {
    const p = await prepared();
    lapse();
    fake.setFault({ kind: 'garbage', status: 502, body: 'bad gateway' }, { path: /^\/api\/v1\/runs$/, times: 5 });
    const outcomes = await recoverLostRuns(t.ctx);
    expect(outcomes.find((o) => o.runId === p.run.id)?.kind).toBe('unavailable');
    // Trigger.dev v4.5 without ClickHouse answers its runs list 500: the run detail says what recovery ran into.
    expect(await readRun(t, p.run.id)).toMatchObject({ status: 'queued', runtime_note: taskLookupFailedNote('Trigger.dev list runs: HTTP 502') });
  });
});
