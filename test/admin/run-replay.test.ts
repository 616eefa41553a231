// Issue 14: POST /runs/{runId}/replay → 201 with the new run (runId among its fields) plus replay_of; the link
// shows both ways in GET /runs/{runId}; started as /trigger starts a run (spec 4.1: eligibility, spec 8.1: the
// agent's trigger limit, the runtime call) and audited as run.replayed.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { LIMITS } from '../../src/rate-limits/rate-limiter.ts';
import { auditActions, call, ok } from './admin-helpers.ts';

const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const fake = new TriggerDevFake();
let t: TestApp;
let agent: SeededAgent;

beforeAll(async () => {
  await fake.start();
  fake.registerTask('my-target');
  t = await createTestApp({ clock, config: { outboundAllowHosts: ['127.0.0.1'] } });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, default_input: { lang: 'en' } });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

/** A run started through /trigger (spec 4.1), as a caller with the ingest key starts one. */
async function triggered(a: SeededAgent, input: Record<string, unknown>): Promise<{ runId: number; remaining: number }> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, payload: { input } });
  expect(res.statusCode).toBe(201);
  return { runId: res.json().runId, remaining: Number(res.headers['ratelimit-remaining']) };
}

const payloadsFor = (runId: number) => [...fake.runs.values()].filter((r) => (r.payload as { runId: number }).runId === runId);

describe('POST /runs/{runId}/replay', () => {
  it('issue 14: a new run of the same agent with the same stored input, linked both ways, created_by null, audited', async () => {
    const { runId: original, remaining } = await triggered(agent, { topic: 'solar' });
    const res = await call(t, 'POST', `/runs/${original}/replay`);
    expect(res.statusCode).toBe(201);
    const replay = res.json();
    const stored = (await ok(t, 200, 'GET', `/runs/${original}`)).input;
    expect(stored).toEqual({ lang: 'en', topic: 'solar' });
    expect(replay).toMatchObject({ agentId: agent.agent.id, status: 'queued', input: stored, created_by: null, replay_of: original });
    expect(replay.runId).toEqual(expect.any(Number));
    expect(replay.runId).not.toBe(original);
    // The runtime was called for the new run with the same input, as /trigger calls it.
    expect(payloadsFor(replay.runId).map((r) => (r.payload as { input: unknown }).input)).toEqual([stored]);
    // Spec 8.1: it counted in the agent's /trigger bucket.
    expect(res.headers['ratelimit-limit']).toBe(String(LIMITS.trigger));
    expect(Number(res.headers['ratelimit-remaining'])).toBe(remaining - 1);

    const detail = await ok(t, 200, 'GET', `/runs/${replay.runId}`);
    expect(detail).toMatchObject({ replay_of: original, replays: [] });
    const { wait: _w, timeline: _tl, replays: _r, ...view } = detail;
    expect(replay).toEqual({ ...view, status: replay.status }); // the admin run view shape, plus replay_of
    expect((await ok(t, 200, 'GET', `/runs/${original}`)).replays).toEqual([replay.runId]);

    const again = await ok(t, 201, 'POST', `/runs/${original}/replay`);
    expect((await ok(t, 200, 'GET', `/runs/${original}`)).replays).toEqual([replay.runId, again.runId]);
    const audit = (await auditActions(t, agent.agent.id)).filter((e) => e.action === 'run.replayed');
    expect(audit.map((e) => [e.run_id, e.details.replay_of, e.actor_user_id])).toEqual([
      [again.runId, original, null],
      [replay.runId, original, null],
    ]);
  });

  it('a replay can itself be replayed: it was started by this service', async () => {
    const { runId } = await triggered(agent, { topic: 'wind' });
    const first = await ok(t, 201, 'POST', `/runs/${runId}/replay`);
    const second = await ok(t, 201, 'POST', `/runs/${first.runId}/replay`);
    expect(second).toMatchObject({ replay_of: first.runId, input: { lang: 'en', topic: 'wind' } });
  });

  it('decisions.md: webhook, ingest and register runs are 409 naming why; nothing is started', async () => {
    const before = fake.runs.size;
    for (const [source, why] of [
      ['webhook', 'masked'],
      ['webhook_and_wait', 'masked'],
      ['ingest', 'reported by the agent'],
      ['register', 'registered by the agent'],
    ] as const) {
      const { id } = await insertRun(t.db, { agentId: agent.agent.id, status: 'completed', source, now: clock.now(), externalRunId: `x-${source}` });
      const res = await call(t, 'POST', `/runs/${id}/replay`);
      expect(res.statusCode).toBe(409);
      expect(res.json()).toMatchObject({ code: 'conflict' });
      expect(res.json().error).toContain(why);
      expect((await ok(t, 200, 'GET', `/runs/${id}`)).replays).toEqual([]);
    }
    expect(fake.runs.size).toBe(before);
  });

  it('spec 4.1: an agent /trigger would refuse is refused the same way (403 not_eligible)', async () => {
    const paused = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey } });
    const { runId } = await triggered(paused, { topic: 'x' });
    await ok(t, 200, 'PATCH', `/agents/${paused.agent.id}`, { status: 'paused' });
    const res = await call(t, 'POST', `/runs/${runId}/replay`);
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'not_eligible' });
  });

  it('spec part 7: a runtime that refuses is answered as /trigger answers it (500 naming the new, failed, linked run)', async () => {
    const refusing = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, target: 'no-such-task' });
    const { id } = await insertRun(t.db, { agentId: refusing.agent.id, status: 'completed', source: 'trigger', now: clock.now(), input: { a: 1 } });
    const res = await call(t, 'POST', `/runs/${id}/replay`);
    expect(res.statusCode).toBe(500);
    const body = res.json();
    expect(body).toMatchObject({ code: 'runtime_failed', runId: expect.any(Number) });
    expect(await ok(t, 200, 'GET', `/runs/${body.runId}`)).toMatchObject({ status: 'failed', replay_of: id });
  });

  it('admin-api.md: unknown or malformed run 404, no token 401', async () => {
    expect((await call(t, 'POST', '/runs/99999999/replay')).statusCode).toBe(404);
    expect((await call(t, 'POST', '/runs/abc/replay')).statusCode).toBe(404);
    const { runId } = await triggered(agent, {});
    expect((await call(t, 'POST', `/runs/${runId}/replay`, undefined, {})).statusCode).toBe(401);
    expect((await ok(t, 200, 'GET', `/runs/${runId}`)).replays).toEqual([]);
  });
});
