// Spec 8.1 zone rows: runs and their synchronous variants 30/min per USER (across agents), waitpoint 20/min and
// credentials 60/min per user AND agent — never per agent alone. 429 carries Retry-After (part 7 rule 1).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/lib/clock.ts';
import type { RateLimiter } from '../../src/rate-limits/rate-limiter.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { seedConnection, zoneToken } from '../credentials/connections.ts';

describe('spec 8.1: which bucket each zone endpoint counts in', () => {
  const hits: Array<{ key: string; limit: number }> = [];
  // Refuses everything it is asked about, so nothing behind the limit runs: only the keys matter here.
  const refusing: RateLimiter = { hit: async (key, limit) => (hits.push({ key, limit }), { allowed: false, limit, remaining: 0, resetSeconds: 17 }) };
  let t: TestApp;
  let a: SeededAgent;
  let b: SeededAgent;
  let u1: string;
  let u2: string;

  beforeAll(async () => {
    t = await createTestApp({ limiter: refusing });
    const orgId = await seedOrg(t);
    a = await seedAgent(t, { orgId });
    b = await seedAgent(t, { orgId });
    u1 = await seedUser(t, { orgId });
    u2 = await seedUser(t, { orgId });
  });
  afterAll(async () => t?.close());

  async function keyOf(agent: SeededAgent, user: string, method: 'GET' | 'POST', path: string) {
    hits.length = 0;
    const res = await t.app.inject({
      method,
      url: `/api/zones/agents/${agent.agent.id}${path}`,
      headers: { authorization: `Bearer ${await zoneToken(t, agent.agent, user)}` },
      ...(method === 'POST' ? { payload: {} } : {}),
    });
    return { res, hit: hits[0] };
  }

  it('spec 8.1: POST /runs, /runs/wait and /runs/download share one 30/min bucket per user, whatever the agent', async () => {
    for (const path of ['/runs', '/runs/wait', '/runs/download']) {
      for (const agent of [a, b]) {
        const { res, hit } = await keyOf(agent, u1, 'POST', path);
        expect(res.statusCode).toBe(429);
        expect(res.headers['retry-after']).toBe('17');
        expect(hit).toEqual({ key: `zone-runs:user:${u1}`, limit: 30 });
      }
    }
    expect((await keyOf(a, u2, 'POST', '/runs')).hit!.key).toBe(`zone-runs:user:${u2}`);
  });

  it('spec 8.1: waitpoint counts 20/min per user and agent', async () => {
    expect((await keyOf(a, u1, 'POST', '/runs/1/waitpoint')).hit).toEqual({ key: `zone-waitpoint:user:${u1}:agent:${a.agent.id}`, limit: 20 });
    expect((await keyOf(b, u1, 'POST', '/runs/1/waitpoint')).hit!.key).toBe(`zone-waitpoint:user:${u1}:agent:${b.agent.id}`);
    expect((await keyOf(a, u2, 'POST', '/runs/1/waitpoint')).hit!.key).toBe(`zone-waitpoint:user:${u2}:agent:${a.agent.id}`);
  });

  it('spec 8.1: credentials count 60/min per user and agent', async () => {
    expect((await keyOf(a, u1, 'GET', '/credentials/x')).hit).toEqual({ key: `zone-credentials:user:${u1}:agent:${a.agent.id}`, limit: 60 });
    expect((await keyOf(b, u2, 'GET', '/credentials/x')).hit!.key).toBe(`zone-credentials:user:${u2}:agent:${b.agent.id}`);
  });

  it('spec 8.1: reading a run is not rate-limited; unauthenticated calls are not counted', async () => {
    const { res, hit } = await keyOf(a, u1, 'GET', '/runs/1');
    expect(res.statusCode).toBe(404);
    expect(hit).toBeUndefined();
    hits.length = 0;
    const anon = await t.app.inject({ method: 'POST', url: `/api/zones/agents/${a.agent.id}/runs`, payload: {} });
    expect(anon.statusCode).toBe(401);
    expect(hits).toEqual([]);
  });
});

describe('spec 8.1: the real limiter on zone credentials (60/min per user and agent)', () => {
  let t: TestApp;
  const clock = new ManualClock(new Date('2030-01-01T10:00:10.000Z'));

  beforeAll(async () => {
    t = await createTestApp({ clock });
  });
  afterAll(async () => t?.close());

  it('spec 8.1 / part 7 rule 1: the 61st call in a minute is 429 with Retry-After; other users and agents are unaffected; the next minute is fresh', async () => {
    const orgId = await seedOrg(t);
    const a = await seedAgent(t, { orgId });
    const b = await seedAgent(t, { orgId });
    const u1 = await seedUser(t, { orgId });
    const u2 = await seedUser(t, { orgId });
    await seedConnection(t, a.agent.id, { integrationId: 'k', type: 'api_key', secret: { value: 'v' } });
    await seedConnection(t, b.agent.id, { integrationId: 'k', type: 'api_key', secret: { value: 'v' } });
    const get = async (agent: SeededAgent, user: string) =>
      t.app.inject({
        method: 'GET',
        url: `/api/zones/agents/${agent.agent.id}/credentials/k`,
        headers: { authorization: `Bearer ${await zoneToken(t, agent.agent, user, clock.now())}` },
      });
    for (let i = 0; i < 60; i++) expect((await get(a, u1)).statusCode).toBe(200);
    const over = await get(a, u1);
    expect(over.statusCode).toBe(429);
    expect(over.headers['retry-after']).toBe('50');
    expect(over.json().code).toBe('rate_limited');
    expect((await get(a, u2)).statusCode).toBe(200);
    expect((await get(b, u1)).statusCode).toBe(200);
    clock.advance(60_000);
    expect((await get(a, u1)).statusCode).toBe(200);
  });
});
