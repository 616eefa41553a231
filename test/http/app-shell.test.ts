import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent } from '../helpers/fixtures.ts';

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
});
