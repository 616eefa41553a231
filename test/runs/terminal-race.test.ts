// Spec part 1: "A run reaches a terminal state by any of three paths … Whichever writes a terminal status first
// wins. The others become no-ops." For one run, a complete callback, a poll whose runtime says FAILED and a
// failure alert land together — 100 times. Exactly one terminal write each time, and never a 5xx.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { TriggerDevFake, signedFailureAlert } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { triggerRun } from '../../src/runs/begin-run.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { listTransitions } from '../../src/runs/run-timeline.ts';
import { findRun } from '../../src/runs/runs-repo.ts';
import type { AppContext } from '../../src/context.ts';

const ALERT_SECRET = 'whsec_race_alert_secret_0123456789';
const ROUNDS = 100;

let t: TestApp;
const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const fake = new TriggerDevFake();
let agent: SeededAgent;
/** The poll runs on a second instance when there is one (PostgreSQL), so the race crosses connections. */
let pollCtx: AppContext;

beforeAll(async () => {
  await fake.start();
  fake.registerTask('my-target');
  t = await createTestApp({ clock });
  pollCtx = onPostgres ? (await t.another()).app.ctx : t.ctx;
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey, alertSecret: ALERT_SECRET }, poll_interval_s: 10 });
  // A webhook action per terminal state: each terminal write queues exactly one outbox row.
  for (const state of ['completed', 'failed', 'cancelled']) {
    await t.db.query(`INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc) VALUES (gen_random_uuid(), $1, $2, 'https://example.test/h', 'x')`, [agent.agent.id, state]);
  }
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

async function timelineOf(runId: number) {
  const run = await findRun(t.db, runId);
  return (await listTransitions(t.db, run!)).map(({ status, via }) => ({ status, via }));
}

describe('spec part 1: callback, poll and alert race to the terminal state', () => {
  it(`first terminal write wins, the others are no-ops (${ROUNDS} rounds)`, async () => {
    const winners = new Map<string, number>();
    for (let round = 0; round < ROUNDS; round++) {
      // A new minute each round keeps the callback under its rate limit (spec 8.1) and makes the poll due.
      clock.advance(60_000);
      const started = await triggerRun(t.ctx, 'trigger', { agent: agent.agent });
      if (!('ok' in started) || !started.ok) throw new Error('the run did not start');
      const runId = started.run.id;
      const externalId = started.run.external_run_id!;
      expect((await transition(t.db, runId, 'started', 'running', clock.now(), {}, { via: 'admin' })).kind).toBe('applied');
      fake.setRun(externalId, { status: 'FAILED', error: { message: 'poll says failed' } });
      await t.db.query('UPDATE runs SET next_poll_at = $2 WHERE id = $1', [runId, clock.now()]);
      const alert = signedFailureAlert({ secret: ALERT_SECRET, runId: externalId, error: { type: 'STRING_ERROR', raw: 'alert says failed' } });

      const [callback, , alertRes] = await Promise.all([
        t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload: { type: 'output', complete: true, output: { by: 'callback' }, outputs: 1 } }),
        pollDueRuns(pollCtx),
        t.app.inject({ method: 'POST', url: `/api/runtimes/${agent.runtimeId}/alerts`, headers: alert.headers, payload: alert.body }),
      ]);
      // The loser callback is a backward move after `failed` (409, rule 1) or the winner (200); never a 5xx.
      expect([200, 409]).toContain(callback.statusCode);
      expect(alertRes.statusCode).toBe(200);

      const run = (await readRun(t, runId))!;
      const winner = run.status === 'completed' ? 'callback' : run.error === 'poll says failed' ? 'poll' : run.error === 'alert says failed' ? 'alert' : `unexpected ${JSON.stringify(run)}`;
      winners.set(winner, (winners.get(winner) ?? 0) + 1);
      expect(['callback', 'poll', 'alert']).toContain(winner);
      if (winner === 'callback') expect(run).toMatchObject({ output_data: { by: 'callback' }, outputs: 1 });
      if (callback.statusCode === 200) expect(winner).toBe('callback');

      const { rows } = await t.db.query<{ event: string }>('SELECT event FROM outbox WHERE run_id = $1', [runId]);
      expect(rows).toEqual([{ event: run.status }]);
      // Issue 14: the timeline names the winner, and only the winner (losers wrote nothing).
      const timeline = [{ status: 'queued', via: 'trigger' }, { status: 'running', via: 'admin' }, { status: run.status, via: winner }];
      expect(await timelineOf(runId)).toEqual(timeline);

      // Everything again, later: nothing changes.
      clock.advance(10_000);
      await pollDueRuns(pollCtx);
      await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload: { type: 'output', failed: true, error: { message: 'late' } } });
      const repeat = await t.app.inject({ method: 'POST', url: `/api/runtimes/${agent.runtimeId}/alerts`, headers: alert.headers, payload: alert.body });
      expect(repeat.json().outcome).toBe('duplicate');
      expect(await readRun(t, runId)).toEqual(run);
      expect((await t.db.query('SELECT 1 FROM outbox WHERE run_id = $1', [runId])).rows).toHaveLength(1);
      expect(await timelineOf(runId)).toEqual(timeline);
    }
    expect([...winners.values()].reduce((a, b) => a + b, 0)).toBe(ROUNDS);
  });
});
