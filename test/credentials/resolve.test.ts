// Spec 4.10 GET /api/credentials/{connectionId}/resolve: two-factor auth, the answer union, 404 visibility,
// no rate limit (8.1), and the credentials.resolved audit entry.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { credentialsToken, seedConnection } from './connections.ts';

let t: TestApp;
let a: SeededAgent;
let b: SeededAgent;
let tokenA: string;

beforeAll(async () => {
  t = await createTestApp();
  a = await seedAgent(t);
  b = await seedAgent(t);
  tokenA = await credentialsToken(t, a.agent, 41);
});
afterAll(async () => t?.close());

const resolve = (connectionId: string, headers: Record<string, string>) =>
  t.app.inject({ method: 'GET', url: `/api/credentials/${connectionId}/resolve`, headers });

describe('spec 4.10: the answer union', () => {
  it('spec 4.10: api_key → {type, value, extras}', async () => {
    const id = await seedConnection(t, a.agent.id, { type: 'api_key', secret: { value: 'sk-live-123' }, extras: { region: 'eu' } });
    const res = await resolve(id, { ...a.agentAuth, 'x-credentials-token': tokenA });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 'api_key', value: 'sk-live-123', extras: { region: 'eu' } });
    expect(res.headers['cache-control']).toBe('no-store');
  });

  it('spec 4.10: basic_auth → {type, username, password, extras}', async () => {
    const id = await seedConnection(t, a.agent.id, { type: 'basic_auth', secret: { username: 'bob', password: 'hunter2' } });
    const res = await resolve(id, { ...a.agentAuth, 'x-credentials-token': tokenA });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 'basic_auth', username: 'bob', password: 'hunter2', extras: {} });
  });

  it('spec 4.10: oauth → {type, access_token, extras} with provider fields, admin metadata winning a collision', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000);
    const id = await seedConnection(t, a.agent.id, {
      type: 'oauth',
      secret: { access_token: 'at-1', token_type: 'bearer', scope: 'read write' },
      extras: { scope: 'admin-says', tenant: 't1' },
      expiresAt,
    });
    const res = await resolve(id, { ...a.agentAuth, 'x-credentials-token': tokenA });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({
      type: 'oauth',
      access_token: 'at-1',
      extras: { token_type: 'bearer', expires_at: expiresAt.toISOString(), scope: 'admin-says', tenant: 't1' },
    });
  });

  it('spec 4.10: an oauth token that cannot be refreshed (no refresh_token) is returned as stored, with its expiry', async () => {
    const expiresAt = new Date(Date.now() - 60_000);
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: { access_token: 'old-at' }, expiresAt });
    const res = await resolve(id, { ...a.agentAuth, 'x-credentials-token': tokenA });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ type: 'oauth', access_token: 'old-at', extras: { expires_at: expiresAt.toISOString() } });
  });

  it('spec 4.10 / decisions: each resolution is audited as credentials.resolved with the token run, never the secret', async () => {
    const id = await seedConnection(t, a.agent.id, { integrationId: 'audited', type: 'api_key', secret: { value: 'audit-secret-value' } });
    const token = await credentialsToken(t, a.agent, 777);
    expect((await resolve(id, { ...a.agentAuth, 'x-credentials-token': token })).statusCode).toBe(200);
    const { rows } = await t.db.query<{ agent_id: number; run_id: number; actor_user_id: string | null; details: unknown }>(
      "SELECT agent_id, run_id, actor_user_id, details FROM audit_log WHERE action = 'credentials.resolved' AND run_id = 777",
    );
    expect(rows).toEqual([{ agent_id: a.agent.id, run_id: 777, actor_user_id: null, details: { connection_id: id, integration_id: 'audited' } }]);
    const all = await t.db.query('SELECT * FROM audit_log');
    expect(JSON.stringify(all.rows)).not.toContain('audit-secret-value');
  });
});

describe('spec 4.10 / part 7: status codes', () => {
  let conn: string;
  beforeAll(async () => {
    conn = await seedConnection(t, a.agent.id, { type: 'api_key', secret: { value: 'v' } });
  });

  it('spec part 7: 401 without the agent key, or with a wrong one', async () => {
    expect((await resolve(conn, { 'x-credentials-token': tokenA })).statusCode).toBe(401);
    expect((await resolve(conn, { authorization: 'Bearer ars_agent_nope', 'x-credentials-token': tokenA })).statusCode).toBe(401);
    // another agent's key with this agent's token: the key names agent B, the token is A's → 403 (bound to another agent)
    expect((await resolve(conn, { ...b.agentAuth, 'x-credentials-token': tokenA })).statusCode).toBe(403);
  });

  it('spec part 7: 401 without X-Credentials-Token, with a malformed one, or an empty one', async () => {
    for (const headers of [{} as Record<string, string>, { 'x-credentials-token': 'not-a-jwt' }, { 'x-credentials-token': '' }, { 'x-credentials-token': 'a.b.c' }]) {
      const res = await resolve(conn, { ...a.agentAuth, ...headers });
      expect(res.statusCode).toBe(401);
      expect(res.json()).toMatchObject({ code: 'unauthorized' });
    }
  });

  it('spec part 7: 401 for an expired credentials token (8.5: 60 minutes)', async () => {
    const old = await credentialsToken(t, a.agent, 1, new Date(Date.now() - 61 * 60_000));
    expect((await resolve(conn, { ...a.agentAuth, 'x-credentials-token': old })).statusCode).toBe(401);
  });

  it("spec part 7: 403 for a valid token of another agent (verified with that agent's own secret)", async () => {
    const tokenB = await credentialsToken(t, b.agent, 5);
    const res = await resolve(conn, { ...a.agentAuth, 'x-credentials-token': tokenB });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: 'forbidden' });
  });

  it('spec 4.10: any unexpired token of the same agent is accepted, whatever its run', async () => {
    for (const runId of [1, 2, 999]) {
      const tok = await credentialsToken(t, a.agent, runId);
      expect((await resolve(conn, { ...a.agentAuth, 'x-credentials-token': tok })).statusCode).toBe(200);
    }
  });

  it('spec part 7: 404 for an unknown id, a non-uuid, an inactive connection, and another agent\'s connection', async () => {
    const inactive = await seedConnection(t, a.agent.id, { type: 'api_key', secret: { value: 'x' }, active: false });
    const foreign = await seedConnection(t, b.agent.id, { type: 'api_key', secret: { value: 'b-secret' } });
    for (const id of [randomUUID(), 'not-a-uuid', "1'; DROP TABLE connections; --", inactive, foreign]) {
      const res = await resolve(encodeURIComponent(id), { ...a.agentAuth, 'x-credentials-token': tokenA });
      expect(res.statusCode, id).toBe(404);
      expect(res.body).not.toContain('b-secret');
    }
  });

  it('spec 8.1: resolution is not rate-limited (the limiter is never consulted, no 429 after many calls)', async () => {
    const hits: string[] = [];
    const counting = await createTestApp({
      limiter: { hit: async (key, limit) => (hits.push(key), { allowed: true, limit, remaining: limit, resetSeconds: 60 }) },
    });
    try {
      const x = await seedAgent(counting);
      const id = await seedConnection(counting, x.agent.id, { type: 'api_key', secret: { value: 'v' } });
      const tok = await credentialsToken(counting, x.agent);
      for (let i = 0; i < 3; i++) {
        const res = await counting.app.inject({ method: 'GET', url: `/api/credentials/${id}/resolve`, headers: { ...x.agentAuth, 'x-credentials-token': tok } });
        expect(res.statusCode).toBe(200);
        expect(res.headers['ratelimit-limit']).toBeUndefined();
      }
      expect(hits).toEqual([]);
    } finally {
      await counting.close();
    }
    const results = [];
    for (let i = 0; i < 70; i++) results.push(await resolve(conn, { ...a.agentAuth, 'x-credentials-token': tokenA }));
    expect(results.map((r) => r.statusCode)).toEqual(Array(70).fill(200));
  });
});
