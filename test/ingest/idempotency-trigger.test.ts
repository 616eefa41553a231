// Issue 13 item 4: Idempotency-Key on /trigger (spec 4.1, 7, 8.1; decisions.md "Idempotency keys"). A retried
// trigger with the same key never makes a second run: the first answer is replayed, concurrent requests make one
// run, a key reused for another request is 422, keys are scoped per agent, expire after 24 h, a 429 is not kept,
// replays do not use up the start limit, and a database failure after the runtime accepted the run is safe to retry.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { LIMITS } from '../../src/rate-limits/rate-limiter.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { expectError, runCount, taskAgent } from '../sync/sync-helpers.ts';

const trig = new TriggerDevFake();
// 40 s to the next minute boundary: no test's requests straddle two rate-limit windows.
const clock = new ManualClock(new Date('2031-06-01T10:00:20.000Z'));
let t: TestApp;

beforeAll(async () => {
  await trig.start();
  t = await createTestApp({ clock });
});
afterAll(async () => {
  await t.close();
  await trig.stop();
});

function trigger(a: SeededAgent, key: string | null, payload: object = {}, path = 'trigger') {
  return t.app.inject({
    method: 'POST',
    url: `/api/agents/${a.agent.id}/runs/${path}`,
    headers: { ...a.ingestAuth, ...(key === null ? {} : { 'idempotency-key': key }) },
    payload,
  });
}

const triggersOf = (a: SeededAgent & { task: string }) => trig.triggers().filter((r) => r.path === `/api/v1/tasks/${a.task}/trigger`).length;

async function bucketCount(agentId: number): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>('SELECT coalesce(sum(count), 0)::int AS n FROM rate_limit_buckets WHERE key = $1', [`trigger:agent:${agentId}`]);
  return rows[0]!.n;
}

async function keyRows(agentId: number): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>('SELECT count(*)::int AS n FROM idempotency_keys WHERE agent_id = $1', [agentId]);
  return rows[0]!.n;
}

describe('issue 13 item 4: Idempotency-Key on /trigger (spec 4.1)', () => {
  it('a retry with the same key and body replays the first answer byte for byte; one run, one runtime call', async () => {
    const a = await taskAgent(t, trig);
    const first = await trigger(a, 'order-1', { input: { q: 1 } });
    expect(first.statusCode, first.body).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    for (let i = 0; i < 3; i++) {
      // The same body spelled with its keys in another order is the same request.
      const again = await trigger(a, 'order-1', { input: { q: 1 }, userId: null });
      expect(again.statusCode).toBe(201);
      expect(again.body).toBe(first.body);
      expect(again.headers['idempotent-replayed']).toBe('true');
    }
    expect(await runCount(t, a.agent.id)).toBe(1);
    expect(triggersOf(a)).toBe(1);
  });

  it('the same key with another body, or on another endpoint, is 422 idempotency_key_reused and writes nothing', async () => {
    const a = await taskAgent(t, trig);
    expect((await trigger(a, 'k-reused', { input: { q: 1 } })).statusCode).toBe(201);
    const runsBefore = await countRows(t, 'runs');
    const otherBody = expectError(await trigger(a, 'k-reused', { input: { q: 2 } }), 422, 'idempotency_key_reused');
    expect(otherBody.error).toContain('Idempotency-Key');
    expect(otherBody).not.toHaveProperty('runId'); // nothing of the first request is given away
    expectError(await trigger(a, 'k-reused', { input: { q: 1 }, timeoutMs: 1000 }, 'trigger-and-wait'), 422, 'idempotency_key_reused');
    expect(await countRows(t, 'runs')).toBe(runsBefore);
    expect(triggersOf(a)).toBe(1);
    expect(await keyRows(a.agent.id)).toBe(1);
  });

  it('10 concurrent requests with one key make one run and one runtime call; all answer its runId', async () => {
    const a = await taskAgent(t, trig);
    const answers = await Promise.all(Array.from({ length: 10 }, () => trigger(a, 'burst', { input: { n: 1 } })));
    for (const r of answers) expect(r.statusCode, r.body).toBe(201);
    const runIds = new Set(answers.map((r) => r.json().runId));
    expect(runIds.size).toBe(1);
    expect(answers.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await runCount(t, a.agent.id)).toBe(1);
    expect(triggersOf(a)).toBe(1);
    expect(await bucketCount(a.agent.id)).toBe(1); // spec 8.1: the replays, racing or not, used up nothing
  });

  it("keys are scoped per agent: another agent's identical key starts its own run", async () => {
    const a = await taskAgent(t, trig);
    const b = await taskAgent(t, trig);
    const ra = await trigger(a, 'shared-key', { input: { q: 1 } });
    const rb = await trigger(b, 'shared-key', { input: { q: 1 } });
    expect([ra.statusCode, rb.statusCode]).toEqual([201, 201]);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
    expect(ra.json().runId).not.toBe(rb.json().runId);
    expect([await runCount(t, a.agent.id), await runCount(t, b.agent.id)]).toEqual([1, 1]);
  });

  it('after 24 hours the key is free again: the same request starts a new run', async () => {
    const a = await taskAgent(t, trig);
    const first = await trigger(a, 'daily', { input: { q: 1 } });
    clock.advance(24 * 3_600_000 - 60_000);
    expect((await trigger(a, 'daily', { input: { q: 1 } })).body).toBe(first.body); // still kept just before
    clock.advance(60_000);
    const later = await trigger(a, 'daily', { input: { q: 1 } });
    expect(later.statusCode).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(later.json().runId).not.toBe(first.json().runId);
    expect(await runCount(t, a.agent.id)).toBe(2);
    expect(await keyRows(a.agent.id)).toBe(1); // the expired claim made way for the new one
  });

  it('a runtime failure (500 runtime_failed, run failed) is the run\'s answer: replayed as it was, no second call', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'task', baseUrl: trig.url, apiKey: trig.secretKey }, target: 'no-such-task' });
    const calls = () => trig.triggers().filter((r) => r.path === '/api/v1/tasks/no-such-task/trigger').length;
    const first = await trigger(a, 'fails', {});
    expectError(first, 500, 'runtime_failed');
    const again = await trigger(a, 'fails', {});
    expect(again.statusCode).toBe(500);
    expect(again.body).toBe(first.body); // the first request's requestId included: it is that answer
    expect(again.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(calls()).toBe(1);
  });

  it('a malformed Idempotency-Key is 400 invalid_header naming the header (422 bodies or not); nothing is written', async () => {
    const a = await taskAgent(t, trig);
    for (const bad of ['', 'has space', 'x'.repeat(256), 'tab\there']) {
      const body = expectError(await trigger(a, bad), 400, 'invalid_header');
      expect(body.error).toContain('headers.idempotency-key');
    }
    // trigger-and-wait answers body errors with 422 (spec part 7); a header is not the body.
    expectError(await trigger(a, 'has space', {}, 'trigger-and-wait'), 400, 'invalid_header');
    expect((await trigger(a, 'x'.repeat(255))).statusCode).toBe(201); // 255 visible characters are fine
    expect(await runCount(t, a.agent.id)).toBe(1);
  });
});

describe('issue 13 item 4: Idempotency-Key and the per-agent start limit (spec 8.1)', () => {
  it('replays start nothing and use up nothing: only the first request is counted', async () => {
    const a = await taskAgent(t, trig);
    const first = await trigger(a, 'counted-once', {});
    expect(first.headers['ratelimit-remaining']).toBe(String(LIMITS.trigger - 1));
    for (let i = 0; i < 3; i++) {
      const again = await trigger(a, 'counted-once', {});
      expect(again.statusCode).toBe(201);
      expect(again.headers['ratelimit-remaining']).toBeUndefined();
    }
    expect(await bucketCount(a.agent.id)).toBe(1);
  });

  it('a 429 is not kept: the key stays free, and the same request starts its run once the minute is over', async () => {
    clock.set(new Date('2031-06-02T10:00:20.000Z'));
    const a = await taskAgent(t, trig);
    for (let i = 0; i < LIMITS.trigger; i++) expect((await trigger(a, null)).statusCode).toBe(201);
    expectError(await trigger(a, 'after-limit', { input: { q: 1 } }), 429, 'rate_limited');
    expect(await keyRows(a.agent.id)).toBe(0);
    clock.advance(60_000);
    const later = await trigger(a, 'after-limit', { input: { q: 1 } });
    expect(later.statusCode, later.body).toBe(201);
    expect(later.headers['idempotent-replayed']).toBeUndefined();
    expect(await runCount(t, a.agent.id)).toBe(LIMITS.trigger + 1);
  });
});

describe('issue 13: a database failure after the runtime accepted the run', () => {
  it('answers 503, and a retry with the same key answers the run that exists instead of starting a second one', async () => {
    const a = await taskAgent(t, trig);
    const query = t.db.query.bind(t.db);
    // The write that records the runtime's run id, right after the runtime said yes, meets a database restart.
    const spy = vi.spyOn(t.db, 'query').mockImplementation(((sql: string, params?: readonly unknown[]) => {
      if (sql.includes('external_run_id = coalesce(external_run_id, $2)')) {
        return Promise.reject(Object.assign(new Error('terminating connection due to administrator command'), { code: '57P01' }));
      }
      return query(sql, params);
    }) as typeof t.db.query);
    let first;
    try {
      first = await trigger(a, 'through-an-outage', { input: { q: 1 } });
    } finally {
      spy.mockRestore();
    }
    expectError(first, 503, 'service_unavailable');
    expect(triggersOf(a)).toBe(1);

    const retry = await trigger(a, 'through-an-outage', { input: { q: 1 } });
    expect(retry.statusCode, retry.body).toBe(201);
    expect(retry.headers['idempotent-replayed']).toBe('true');
    expect(triggersOf(a)).toBe(1);
    expect(await runCount(t, a.agent.id)).toBe(1);
    const { rows } = await t.db.query<{ id: number }>('SELECT id FROM runs WHERE agent_id = $1', [a.agent.id]);
    expect(retry.json()).toEqual({ runId: rows[0]!.id, status: 'queued' });
  });
});
