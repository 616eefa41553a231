import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent } from '../helpers/fixtures.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe('app shell', () => {
  it('answers health with the database reachable', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/healthz' });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect(res.headers['x-request-id']).toMatch(/^req_/);
  });

  it('decisions.md probes: /livez answers without touching the database; /readyz checks it and the migrations', async () => {
    const queries = vi.spyOn(t.ctx.db, 'query');
    try {
      const live = await t.app.inject({ method: 'GET', url: '/livez' });
      expect(live.statusCode).toBe(200);
      expect(live.json()).toEqual({ ok: true });
      expect(queries).not.toHaveBeenCalled();
    } finally {
      queries.mockRestore();
    }
    const ready = await t.app.inject({ method: 'GET', url: '/readyz' });
    expect(ready.statusCode, ready.body).toBe(200);
    expect(ready.json()).toEqual({ ok: true });
  });

  it('decisions.md probes: /readyz is 503 with Retry-After when the database fails or a migration is pending', async () => {
    const broken = vi.spyOn(t.ctx.db, 'query').mockRejectedValue(new Error('connection refused'));
    try {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.headers['retry-after']).toBe('5');
      expect(res.json()).toMatchObject({ code: 'not_ready', error: 'not ready: the database did not answer', requestId: res.headers['x-request-id'] });
      expect((await t.app.inject({ method: 'GET', url: '/livez' })).statusCode).toBe(200); // alive all the same
    } finally {
      broken.mockRestore();
    }
    const { rows } = await t.db.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version DESC LIMIT 1');
    await t.db.query('DELETE FROM schema_migrations WHERE version = $1', [rows[0]!.version]);
    try {
      const res = await t.app.inject({ method: 'GET', url: '/readyz' });
      expect(res.statusCode).toBe(503);
      expect(res.json().error).toBe(`not ready: migrations not applied: ${rows[0]!.version}`);
    } finally {
      await t.db.query('INSERT INTO schema_migrations (version) VALUES ($1)', [rows[0]!.version]);
    }
    expect((await t.app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
  });

  it('issue 11: a database that cannot be reached answers 503 service_unavailable with Retry-After, never a 500 or its address', async () => {
    const a = await seedAgent(t);
    const refused = Object.assign(new Error('connect ECONNREFUSED 10.1.2.3:5432'), { code: 'ECONNREFUSED', address: '10.1.2.3', port: 5432 });
    const failures = [refused, new Error('timeout exceeded when trying to connect'), Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' })];
    for (const failure of failures) {
      const broken = vi.spyOn(t.ctx.db, 'query').mockRejectedValue(failure);
      try {
        for (const req of [
          { method: 'GET' as const, url: '/healthz' },
          { method: 'GET' as const, url: '/api/admin/runs', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } },
          { method: 'POST' as const, url: `/api/agents/${a.agent.id}/runs/register`, headers: a.ingestAuth, payload: { externalRunId: 'ext-1' } },
        ]) {
          const res = await t.app.inject(req);
          expect(res.statusCode, `${req.url}: ${res.body}`).toBe(503);
          expect(res.headers['retry-after']).toBe('5');
          expect(res.json()).toEqual({ error: 'the database is unavailable; retry later', code: 'service_unavailable', requestId: res.headers['x-request-id'] });
          expect(res.body).not.toContain('10.1.2.3');
          const mine = t.logs.map((l) => JSON.parse(l) as { level: number; msg: string; reqId?: string }).filter((l) => l.reqId === res.headers['x-request-id']);
          // Issue 39 item 1: one line, at warn, with the reason and without a stack.
          expect(mine).toEqual([expect.objectContaining({ level: 40, msg: 'request failed', code: 'service_unavailable', reason: failure.message })]);
          expect(mine[0]).not.toHaveProperty('err');
        }
      } finally {
        broken.mockRestore();
      }
    }
    // Any other database failure is still a surprise: 500.
    const other = vi.spyOn(t.ctx.db, 'query').mockRejectedValue(Object.assign(new Error('syntax error'), { code: '42601' }));
    try {
      expect((await t.app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(500);
    } finally {
      other.mockRestore();
    }
  });

  it('decisions.md errors: unknown routes get the error body with a request id', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/nope' });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toMatchObject({ code: 'not_found', requestId: res.headers['x-request-id'] });
  });

  it('admin-api.md: a missing or wrong admin token is 401', async () => {
    for (const headers of [{}, { authorization: 'Bearer wrong' }, { authorization: 'Basic abc' }]) {
      const res = await t.app.inject({ method: 'GET', url: '/api/admin/runs', headers });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe('unauthorized');
    }
  });

  it('spec part 5: an ingest key of another agent is 401 on ingest routes', async () => {
    const a = await seedAgent(t);
    const b = await seedAgent(t);
    const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/register`, headers: b.ingestAuth, payload: {} });
    expect(res.statusCode).toBe(401);
  });

  it('issue 39 item 1: one info line per request (method, route, status, duration, request id, agent, run); a failure is that one line, at warn', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'task', baseUrl: await unusedUrl(), apiKey: 'tr_dev_x' } });
    const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, payload: {} });
    expect(res.statusCode).toBe(500);
    const lines = (): Array<Record<string, unknown>> => t.logs.map((l) => JSON.parse(l) as Record<string, unknown>);
    const mine = lines().filter((l) => l.reqId === res.headers['x-request-id']);
    expect(mine).toEqual([
      expect.objectContaining({
        level: 40, msg: 'request failed', method: 'POST', route: '/api/agents/:agentId/runs/trigger', statusCode: 500,
        agentId: a.agent.id, runId: res.json().runId, code: 'runtime_failed', reason: expect.stringContaining('runtime unreachable'), ms: expect.any(Number),
      }),
    ]);
    expect(lines().some((l) => l.msg === 'incoming request')).toBe(false); // Fastify's own pair of lines is off
    expect(JSON.stringify(mine)).not.toContain(a.ingestAuth.authorization.slice(7)); // never the key

    const okRes = await t.app.inject({ method: 'GET', url: '/healthz' });
    const okLines = lines().filter((l) => l.reqId === okRes.headers['x-request-id']);
    expect(okLines).toEqual([expect.objectContaining({ level: 30, msg: 'request completed', method: 'GET', route: '/healthz', statusCode: 200 })]);

    const refused = await t.app.inject({ method: 'GET', url: '/api/admin/runs', headers: { authorization: 'Bearer wrong' } });
    expect(lines().filter((l) => l.reqId === refused.headers['x-request-id'])).toEqual([expect.objectContaining({ level: 30, statusCode: 401 })]);
  });

  it('issue 39 item 1: a caller\'s X-Request-Id of sane form is kept, echoed and logged; any other is replaced', async () => {
    const kept = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': 'caller-7f3a:2' } });
    expect(kept.headers['x-request-id']).toBe('caller-7f3a:2');
    expect(t.logs.some((l) => (JSON.parse(l) as { reqId?: string }).reqId === 'caller-7f3a:2')).toBe(true);
    for (const bad of ['', 'has space', 'x'.repeat(129), '<script>', 'a\u00e9']) {
      const res = await t.app.inject({ method: 'GET', url: '/healthz', headers: { 'x-request-id': bad } });
      expect(res.headers['x-request-id']).toMatch(/^req_/);
    }
  });

  it('issue 39 item 1: ARS_REQUEST_LOG=errors keeps the lines of 4xx and 5xx answers only; a request logging nothing costs no child logger', async () => {
    const quiet = await createTestApp({ config: { logLevel: 'info', requestLog: 'errors' } });
    try {
      const children = vi.spyOn(quiet.app.log, 'child');
      const ok = await quiet.app.inject({ method: 'GET', url: '/healthz' });
      expect(ok.statusCode).toBe(200);
      const refused = await quiet.app.inject({ method: 'GET', url: '/nope' });
      expect(refused.statusCode).toBe(404);
      expect(children).not.toHaveBeenCalled();
      const lines = quiet.logs.map((l) => JSON.parse(l) as { msg: string; reqId?: string; statusCode?: number });
      expect(lines.some((l) => l.reqId === ok.headers['x-request-id'])).toBe(false);
      expect(lines.filter((l) => l.reqId === refused.headers['x-request-id'])).toEqual([expect.objectContaining({ statusCode: 404, route: null, url: '/nope' })]);
    } finally {
      await quiet.close();
    }
  });
});
