// Issue 14, the Dashboard page: runs by status over time and outputs per agent per day and in total for a chosen
// period (spec 2.2: outputs are "used for billing, dashboards and ROI metrics"), from SQL aggregates.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { call, expectInvalid, ok } from './admin-helpers.ts';

const clock = new ManualClock(new Date('2026-05-20T12:00:00Z'));
let t: TestApp;
let orgId: string;
let a: SeededAgent;
let b: SeededAgent;
let elsewhere: SeededAgent;

/** A run created at `at`, completed with `outputs` (or left as `status`). */
async function runAt(agent: SeededAgent, at: string, outcome: { outputs: number } | 'failed' | 'queued'): Promise<void> {
  const now = new Date(at);
  const { id } = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now });
  if (outcome === 'failed') await transition(t.db, id, 'terminal', 'failed', now, { error: 'x' }, { via: 'admin' });
  else if (outcome !== 'queued') await transition(t.db, id, 'terminal', 'completed', now, { outputData: {}, outputs: outcome.outputs }, { via: 'admin' });
}

beforeAll(async () => {
  t = await createTestApp({ clock });
  orgId = await seedOrg(t);
  a = await seedAgent(t, { orgId });
  b = await seedAgent(t, { orgId });
  elsewhere = await seedAgent(t);
  await runAt(a, '2026-05-01T23:30:00Z', { outputs: 3 });
  await runAt(a, '2026-05-02T00:30:00+02:00', { outputs: 4 }); // 2026-05-01T22:30Z: still 1 May in UTC
  await runAt(a, '2026-05-02T00:10:00Z', 'failed');
  await runAt(b, '2026-05-02T09:00:00Z', { outputs: 10 });
  await runAt(b, '2026-05-02T10:00:00Z', 'queued');
  await runAt(elsewhere, '2026-05-02T11:00:00Z', { outputs: 100 });
  await runAt(a, '2026-05-03T00:00:00Z', { outputs: 50 }); // at `to`: outside [from, to)
  await runAt(a, '2026-03-01T00:00:00Z', { outputs: 7 }); // before the default 30 days
});
afterAll(() => t.close());

const zeros = { queued: 0, running: 0, waiting: 0, completed: 0, failed: 0, cancelled: 0 };

describe('GET /dashboard', () => {
  it('issue 14: runs by status and outputs per UTC day (bucketed by created_at), runs and outputs per agent, totals; `to` exclusive', async () => {
    const body = await ok(t, 200, 'GET', `/dashboard?from=2026-05-01T00:00:00Z&to=2026-05-03T00:00:00Z&org_id=${orgId}`);
    expect(body).toEqual({
      from: '2026-05-01T00:00:00.000Z',
      to: '2026-05-03T00:00:00.000Z',
      runs_by_status: [
        { day: '2026-05-01', status: 'completed', count: 2 },
        { day: '2026-05-02', status: 'completed', count: 1 },
        { day: '2026-05-02', status: 'failed', count: 1 },
        { day: '2026-05-02', status: 'queued', count: 1 },
      ],
      outputs_by_day: [
        { day: '2026-05-01', outputs: 7 },
        { day: '2026-05-02', outputs: 10 },
      ],
      // Most outputs first: b's one completed run outweighs a's two.
      by_agent: [
        { agentId: b.agent.id, runs: 2, outputs: 10 },
        { agentId: a.agent.id, runs: 3, outputs: 7 },
      ],
      totals: { runs: 5, outputs: 17, by_status: { ...zeros, completed: 3, failed: 1, queued: 1 } },
    });
  });

  it('issue 14: agent_id narrows to one agent; without filters every organization counts', async () => {
    const period = 'from=2026-05-01T00:00:00Z&to=2026-05-03T00:00:00Z';
    const one = await ok(t, 200, 'GET', `/dashboard?${period}&agent_id=${b.agent.id}`);
    expect(one.totals).toEqual({ runs: 2, outputs: 10, by_status: { ...zeros, completed: 1, queued: 1 } });
    // One agent's outputs per day (issue 14) are its filtered outputs_by_day.
    expect(one.outputs_by_day).toEqual([{ day: '2026-05-02', outputs: 10 }]);
    expect(one.by_agent).toEqual([{ agentId: b.agent.id, runs: 2, outputs: 10 }]);
    const aPerDay = await ok(t, 200, 'GET', `/dashboard?${period}&agent_id=${a.agent.id}`);
    expect(aPerDay.outputs_by_day).toEqual([{ day: '2026-05-01', outputs: 7 }, { day: '2026-05-02', outputs: 0 }]);
    expect((await ok(t, 200, 'GET', `/dashboard?${period}`)).totals).toMatchObject({ runs: 6, outputs: 117 });
    // An organization or agent with no runs is an empty dashboard, not a 404.
    expect((await ok(t, 200, 'GET', `/dashboard?${period}&org_id=${await seedOrg(t)}`)).totals).toEqual({ runs: 0, outputs: 0, by_status: zeros });
  });

  it('issue 14: the period defaults to the last 30 days up to now', async () => {
    const body = await ok(t, 200, 'GET', `/dashboard?org_id=${orgId}`);
    expect(body).toMatchObject({ from: '2026-04-20T12:00:00.000Z', to: '2026-05-20T12:00:00.000Z' });
    expect(body.totals).toMatchObject({ runs: 6, outputs: 67 }); // 1-3 May; not the 1 March run
  });

  it('bad input is a 400 naming the parameter: a bad date, from not before to, a period over 366 days', async () => {
    expectInvalid(await call(t, 'GET', '/dashboard?from=yesterday'), 'querystring.from');
    expectInvalid(await call(t, 'GET', '/dashboard?from=2026-05-01'), 'querystring.from'); // no time, no offset
    expectInvalid(await call(t, 'GET', '/dashboard?to=2026-02-30T00:00:00Z'), 'querystring.to');
    expectInvalid(await call(t, 'GET', '/dashboard?from=2026-05-02T00:00:00Z&to=2026-05-01T00:00:00Z'), 'querystring.from');
    expectInvalid(await call(t, 'GET', '/dashboard?from=2026-05-01T00:00:00Z&to=2026-05-01T00:00:00Z'), 'querystring.from');
    expectInvalid(await call(t, 'GET', '/dashboard?from=2024-01-01T00:00:00Z&to=2026-01-01T00:00:00Z'), 'querystring.from');
    expectInvalid(await call(t, 'GET', '/dashboard?agent_id=x'), 'querystring.agent_id');
    expectInvalid(await call(t, 'GET', '/dashboard?org_id=nope'), 'querystring.org_id');
    expect((await call(t, 'GET', '/dashboard', undefined, {})).statusCode).toBe(401);
  });
});
