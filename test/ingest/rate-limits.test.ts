// Spec 8.1: /register and /ingest each allow 20 requests per minute per agent, in fixed buckets reset on the minute
// boundary; part 7 rule 1: a 429 carries Retry-After in seconds to that boundary. The limiter fails open.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { DbRateLimiter } from '../../src/rate-limits/rate-limiter.ts';
import type { Queryable } from '../../src/storage/db.ts';
import { expectError, runsOf } from '../runtime-api/support.ts';

const clock = new ManualClock(new Date('2030-05-01T08:00:15.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(() => t.close());

const endpoints = [
  {
    name: 'register',
    agent: (app: TestApp = t) => seedAgent(app),
    send: (app: TestApp, a: SeededAgent, i: number) =>
      app.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/register`, headers: a.ingestAuth, payload: { externalRunId: `r-${i}` } }),
    ok: 201,
  },
  {
    name: 'ingest',
    agent: (app: TestApp = t) => seedAgent(app, { managed_by: 'standalone' }),
    send: (app: TestApp, a: SeededAgent, i: number) =>
      app.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/ingest`, headers: a.ingestAuth, payload: { externalRunId: `i-${i}`, status: 'running' } }),
    ok: 200,
  },
];

describe.each(endpoints)('spec 8.1 POST /$name: 20/min per agent', ({ agent, send, ok }) => {
  it('the 21st call in a minute is 429 with Retry-After and RateLimit-* headers, and writes nothing', async () => {
    clock.set(new Date('2030-05-01T08:00:15.000Z'));
    const a = await agent();
    for (let i = 0; i < 20; i++) {
      const res = await send(t, a, i);
      expect(res.statusCode, res.body).toBe(ok);
      expect(res.headers['ratelimit-limit']).toBe('20');
      expect(res.headers['ratelimit-remaining']).toBe(String(19 - i));
      expect(res.headers['ratelimit-reset']).toBe('45');
    }
    const limited = await send(t, a, 20);
    expectError(limited, 429, 'rate_limited');
    expect(limited.headers['retry-after']).toBe('45'); // 08:00:15 → 08:01:00
    expect(limited.headers['ratelimit-remaining']).toBe('0');
    expect(await runsOf(t, a.agent.id)).toHaveLength(20);
  });

  it('another agent is unaffected; the bucket resets at the minute boundary, not 60 s after the first call', async () => {
    clock.set(new Date('2030-05-01T09:00:40.000Z'));
    const a = await agent();
    const b = await agent();
    for (let i = 0; i < 20; i++) expect((await send(t, a, i)).statusCode).toBe(ok);
    clock.set(new Date('2030-05-01T09:00:59.500Z'));
    const limited = await send(t, a, 20);
    expectError(limited, 429);
    expect(limited.headers['retry-after']).toBe('1');
    expect((await send(t, b, 0)).statusCode).toBe(ok);
    clock.set(new Date('2030-05-01T09:01:00.000Z'));
    const fresh = await send(t, a, 21);
    expect(fresh.statusCode).toBe(ok);
    expect(fresh.headers['ratelimit-remaining']).toBe('19');
  });

  it('fails open: a limiter store that errors lets every call through', async () => {
    const storeErrors: unknown[] = [];
    const broken: Queryable = { query: async () => Promise.reject(new Error('rate store down')) };
    const open = await createTestApp({ clock, limiter: new DbRateLimiter(broken, clock, (err) => storeErrors.push(err)) });
    try {
      const a = await agent(open);
      for (let i = 0; i < 25; i++) expect((await send(open, a, i)).statusCode).toBe(ok);
      expect(storeErrors).toHaveLength(25);
    } finally {
      await open.close();
    }
  });
});
