// Spec 8.1 where the count rides on the request's own write (decisions.md "Rate limits"): /trigger's run insert
// and /callback's update carry the bucket count in the same statement. Exactly the limit gets through under
// concurrency, a refused request writes nothing, requests refused before their write still count, and a bucket
// store that errors fails open without losing the write.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, ADMIN_TOKEN, type TestApp } from '../helpers/test-app.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { LIMITS } from '../../src/rate-limits/rate-limiter.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { expectError, runCount, taskAgent } from '../sync/sync-helpers.ts';
import { seedRun } from '../runtime-api/support.ts';
import type { SeededAgent } from '../helpers/fixtures.ts';

const trig = new TriggerDevFake();
const clock = new ManualClock(new Date('2031-06-01T10:00:20.000Z')); // 40 s to the boundary: none falls inside a test
let t: TestApp;

beforeAll(async () => {
  await trig.start();
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t.close();
  await trig.stop();
});

const trigger = (app: TestApp, a: SeededAgent, payload: unknown = {}) =>
  app.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, payload: payload as object });
const callback = (app: TestApp, a: SeededAgent, runId: number) =>
  app.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload: { type: 'output', output: { step: 1 } } });

async function bucketCount(app: TestApp, key: string): Promise<number> {
  const { rows } = await app.db.query<{ count: number }>('SELECT coalesce(sum(count), 0)::int AS count FROM rate_limit_buckets WHERE key = $1', [key]);
  return rows[0]!.count;
}

describe('spec 8.1: the count made by the run write itself', () => {
  it('/trigger: of 30 simultaneous calls exactly 20 start a run; the other 10 are 429 and write nothing', async () => {
    const a = await taskAgent(t, trig);
    const answers = await Promise.all(Array.from({ length: 30 }, () => trigger(t, a)));
    const codes = answers.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 201)).toHaveLength(LIMITS.trigger);
    expect(codes.filter((c) => c === 429)).toHaveLength(10);
    for (const r of answers.filter((x) => x.statusCode === 429)) {
      expectError(r, 429, 'rate_limited');
      expect(r.headers['retry-after']).toBe('40');
      expect(r.headers['ratelimit-remaining']).toBe('0');
    }
    // Every allowed answer carries its own place in the bucket.
    const remaining = answers.filter((r) => r.statusCode === 201).map((r) => Number(r.headers['ratelimit-remaining']));
    expect(remaining.sort((x, y) => x - y)).toEqual(Array.from({ length: 20 }, (_, i) => i));
    expect(await runCount(t, a.agent.id)).toBe(LIMITS.trigger);
    expect(trig.triggers().filter((r) => r.path === `/api/v1/tasks/${a.task}/trigger`)).toHaveLength(LIMITS.trigger);
    // Known over the limit now: answered from memory, the bucket is not touched again.
    const before = await bucketCount(t, `trigger:agent:${a.agent.id}`);
    expectError(await trigger(t, a), 429, 'rate_limited');
    expect(await bucketCount(t, `trigger:agent:${a.agent.id}`)).toBe(before);
  });

  it('/callback: of 30 simultaneous output callbacks exactly 20 are applied; the other 10 are 429', async () => {
    const a = await taskAgent(t, trig);
    const runId = (await seedRun(t, a.agent.id, 'running')).id;
    const answers = await Promise.all(Array.from({ length: 30 }, () => callback(t, a, runId)));
    const codes = answers.map((r) => r.statusCode);
    expect(codes.filter((c) => c === 200)).toHaveLength(LIMITS.callbackAndWaitpoint);
    expect(codes.filter((c) => c === 429)).toHaveLength(10);
    const { rows } = await t.db.query<{ status: string }>('SELECT status FROM runs WHERE id = $1', [runId]);
    expect(rows[0]!.status).toBe('running');
  });

  it('a call refused before its write (400, 403) still counts: after 20 of them the next valid call is 429', async () => {
    const a = await taskAgent(t, trig, undefined, { allow_external_triggers: false });
    const key = `trigger:agent:${a.agent.id}`;
    for (let i = 0; i < 10; i++) expectError(await trigger(t, a, { input: 'not an object' }), 400);
    for (let i = 0; i < 10; i++) expectError(await trigger(t, a), 403);
    // Counted just after each answer was sent.
    await vi.waitFor(async () => expect(await bucketCount(t, key)).toBe(20), { timeout: 5_000, interval: 20 });
    const enable = await t.app.inject({
      method: 'PATCH',
      url: `/api/admin/agents/${a.agent.id}`,
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
      payload: { allow_external_triggers: true },
    });
    expect(enable.statusCode, enable.body).toBe(200);
    expectError(await trigger(t, a), 429, 'rate_limited');
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec 8.1 / decisions.md: by default a store error is logged, not swallowed, and the request still goes through', async () => {
    const open = await createTestApp({ clock });
    try {
      await open.db.exec(`
        CREATE FUNCTION refuse_bucket() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'bucket store down'; END $$;
        CREATE TRIGGER refuse_bucket BEFORE INSERT OR UPDATE ON rate_limit_buckets FOR EACH ROW EXECUTE FUNCTION refuse_bucket();`);
      const a = await taskAgent(open, trig);
      expect((await trigger(open, a)).statusCode).toBe(201);
      const lines = open.logs.filter((l) => l.includes('rate-limit store failed'));
      expect(lines).toHaveLength(1);
      expect(JSON.parse(lines[0]!)).toMatchObject({ level: 50, err: { message: expect.stringMatching(/bucket store down/) } });
    } finally {
      await open.close();
    }
  });

  it('a bucket store that errors fails open: the run is written, the callback applied, the error reported', async () => {
    const storeErrors: unknown[] = [];
    const open = await createTestApp({ clock, onLimiterError: (err) => storeErrors.push(err) });
    try {
      // The bucket table refuses every write, as a broken or locked store would; the runs table is fine.
      await open.db.exec(`
        CREATE FUNCTION refuse_bucket() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'bucket store down'; END $$;
        CREATE TRIGGER refuse_bucket BEFORE INSERT OR UPDATE ON rate_limit_buckets FOR EACH ROW EXECUTE FUNCTION refuse_bucket();`);
      const a = await taskAgent(open, trig);
      for (let i = 0; i < 25; i++) expect((await trigger(open, a)).statusCode).toBe(201);
      expect(await runCount(open, a.agent.id)).toBe(25);
      const runId = (await seedRun(open, a.agent.id, 'running')).id;
      for (let i = 0; i < 25; i++) expect((await callback(open, a, runId)).statusCode).toBe(200);
      expect(storeErrors).toHaveLength(50);
      expect(String(storeErrors[0])).toMatch(/bucket store down/);
    } finally {
      await open.close();
    }
  });
});
