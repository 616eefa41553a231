// Spec 8.1: callback and waitpoint share one bucket of 20 requests per minute per agent, in fixed buckets reset
// on the minute boundary; part 7 rule 1: a 429 carries Retry-After in seconds to that boundary.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { DbRateLimiter } from '../../src/rate-limits/rate-limiter.ts';
import type { Queryable } from '../../src/storage/db.ts';
import { expectError, seedRun } from './support.ts';
import type { RunStatus } from '../../src/runs/run-states.ts';

const clock = new ManualClock(new Date('2030-04-01T08:00:10.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock }); // the real DbRateLimiter on the test database
});
afterAll(() => t.close());

const taskAgent = () => seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
const callback = (a: SeededAgent, runId: number) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload: { type: 'output', output: { n: 1 } } });
const waitpoint = (a: SeededAgent, runId: number) => t.app.inject({ method: 'POST', url: `/api/runs/${runId}/waitpoint`, headers: a.agentAuth, payload: {} });

describe('spec 8.1 callback + waitpoint rate limit (20/min per agent, shared)', () => {
  it('counts across runs of the same agent; the 21st call is 429 with Retry-After and RateLimit-* headers', async () => {
    clock.set(new Date('2030-04-01T08:00:10.000Z'));
    const a = await taskAgent();
    const r1 = (await seedRun(t, a.agent.id)).id;
    const r2 = (await seedRun(t, a.agent.id)).id;
    for (let i = 0; i < 20; i++) {
      const res = await callback(a, i % 2 === 0 ? r1 : r2);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.headers['ratelimit-limit']).toBe('20');
      expect(res.headers['ratelimit-remaining']).toBe(String(19 - i));
    }
    const limited = await callback(a, r2);
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers['retry-after']).toBe('50'); // 08:00:10 → 08:01:00
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(limited.headers['ratelimit-reset']).toBe('50');
    // Shared with /waitpoint (spec 8.1): the same agent is limited there too.
    expectError(await waitpoint(a, r1), 429, 'rate_limited');
  });

  it('waitpoint calls use up the callback budget', async () => {
    clock.set(new Date('2030-04-01T09:00:00.000Z'));
    const a = await taskAgent();
    const run = (await seedRun(t, a.agent.id)).id;
    for (let i = 0; i < 15; i++) expect((await waitpoint(a, run)).statusCode).not.toBe(429);
    for (let i = 0; i < 5; i++) expect((await callback(a, run)).statusCode).toBe(200);
    expectError(await callback(a, run), 429, 'rate_limited');
  });

  it('an output report counts once, whichever statement records it (a queued run is lifted by a second one)', async () => {
    clock.set(new Date('2030-04-01T11:00:00.000Z'));
    const a = await taskAgent();
    const other = await taskAgent();
    const statuses: RunStatus[] = ['queued', 'running', 'queued', 'waiting', 'completed', 'queued'];
    for (const [i, status] of statuses.entries()) {
      const res = await callback(a, (await seedRun(t, a.agent.id, status)).id);
      expect(res.statusCode, `${status}: ${res.body}`).toBe(status === 'completed' ? 409 : 200);
      expect(res.headers['ratelimit-remaining'], status).toBe(String(19 - i));
    }
    // A run of another agent is not found (spec 4.8) after both statements found nothing: still one count.
    const foreign = await callback(a, (await seedRun(t, other.agent.id, 'queued')).id);
    expectError(foreign, 404, 'not_found');
    expect(foreign.headers['ratelimit-remaining']).toBe(String(19 - statuses.length));
  });

  it('another agent is unaffected, and the bucket resets at the minute boundary', async () => {
    clock.set(new Date('2030-04-01T10:00:59.000Z'));
    const a = await taskAgent();
    const b = await taskAgent();
    const ra = (await seedRun(t, a.agent.id)).id;
    const rb = (await seedRun(t, b.agent.id)).id;
    for (let i = 0; i < 20; i++) await callback(a, ra);
    const limited = await callback(a, ra);
    expectError(limited, 429);
    expect(limited.headers['retry-after']).toBe('1');
    expect((await callback(b, rb)).statusCode).toBe(200);
    clock.set(new Date('2030-04-01T10:01:00.000Z'));
    const fresh = await callback(a, ra);
    expect(fresh.statusCode).toBe(200);
    expect(fresh.headers['ratelimit-remaining']).toBe('19');
  });
});

describe('spec 8.1 "the limiter fails open"', () => {
  it('a store that errors lets every callback through, and the error is reported', async () => {
    const storeErrors: unknown[] = [];
    const broken: Queryable = { query: async () => Promise.reject(new Error('rate store down')) };
    const open = await createTestApp({ clock, limiter: new DbRateLimiter(broken, clock, (err) => storeErrors.push(err)) });
    try {
      const a = await seedAgent(open, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
      const run = (await seedRun(open, a.agent.id)).id;
      for (let i = 0; i < 25; i++) {
        const res = await open.app.inject({ method: 'POST', url: `/api/runs/${run}/callback`, headers: a.agentAuth, payload: { type: 'started' } });
        expect(res.statusCode).toBe(200);
      }
      expect(storeErrors).toHaveLength(25);
    } finally {
      await open.close();
    }
  });
});
