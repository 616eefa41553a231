// Shared by the /register, /ingest and /callback suites (test/ingest, test/runtime-api).
import { randomUUID } from 'node:crypto';
import { expect } from 'vitest';
import type { LightMyRequestResponse } from 'fastify';
import type { TestApp } from '../helpers/test-app.ts';
import type { RateLimiter } from '../../src/rate-limits/rate-limiter.ts';
import { findRun, insertRun, type RunRow } from '../../src/runs/runs-repo.ts';
import { connectionSecretAt } from '../../src/agents/connections-repo.ts';
import type { RunStatus } from '../../src/runs/run-states.ts';

/** For tests that are not about rate limits: the callback bucket (20/min per agent) would otherwise bite. */
export const permissiveLimiter: RateLimiter = {
  hit: async (_key, limit) => ({ allowed: true, limit, remaining: limit, resetSeconds: 60 }),
};

/** Every refusal: the status asked for (or any 4xx), a JSON error body with a request id, never a 5xx. */
export function expectError(res: LightMyRequestResponse, status: number | '4xx', code?: string): Record<string, unknown> {
  if (status === '4xx') {
    expect(res.statusCode, res.body).toBeGreaterThanOrEqual(400);
    expect(res.statusCode, res.body).toBeLessThan(500);
  } else {
    expect(res.statusCode, res.body).toBe(status);
  }
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  const body = res.json() as Record<string, unknown>;
  expect(body).toMatchObject({ error: expect.any(String), code: expect.any(String), requestId: res.headers['x-request-id'] });
  if (code) expect(body.code).toBe(code);
  return body;
}

/** A raw JSON request body (for malformed JSON and keys object literals cannot carry). */
export function rawJson(body: string) {
  return { payload: body, headers: { 'content-type': 'application/json' } };
}

/** A string of `bytes` ASCII characters wrapped in an object: the "2 MiB output". */
export function bigObject(bytes: number): Record<string, unknown> {
  return { blob: 'x'.repeat(bytes), nested: { list: [1, 2, 3] } };
}

export function nested(depth: number): unknown {
  let v: unknown = 'leaf';
  for (let i = 0; i < depth; i++) v = { a: v };
  return v;
}

export async function seedRun(t: TestApp, agentId: number, status: RunStatus = 'running', extra: Partial<Parameters<typeof insertRun>[1]> = {}): Promise<RunRow> {
  const now = t.ctx.clock.now();
  const { id } = await insertRun(t.db, { agentId, status, source: 'trigger', now, startedAt: status === 'queued' ? null : now, ...extra });
  return (await findRun(t.db, id))!;
}

export async function seedConnection(t: TestApp, agentId: number, integrationId: string, active = true): Promise<string> {
  const id = randomUUID();
  await t.db.query(
    `INSERT INTO connections (id, agent_id, integration_id, type, secret_enc, active) VALUES ($1, $2, $3, 'api_key', $4, $5)`,
    [id, agentId, integrationId, t.ctx.secrets.sealJson({ value: 'sk-test' }, connectionSecretAt(id)), active],
  );
  await t.ctx.agents.changed(agentId); // as the admin API does: the connection map is cached per agent
  return id;
}

export async function runsOf(t: TestApp, agentId: number): Promise<Array<Record<string, unknown>>> {
  const { rows } = await t.db.query<Record<string, unknown>>('SELECT * FROM runs WHERE agent_id = $1 ORDER BY id', [agentId]);
  return rows;
}

/** Inputs every endpoint must refuse without writing: [label, request options]. Field names are the endpoint's. */
export function hostileBodies(valid: Record<string, unknown>, objectField: string): Array<[string, { payload?: unknown; headers?: Record<string, string> }]> {
  const json = (v: unknown) => ({ payload: JSON.stringify(v), headers: { 'content-type': 'application/json' } });
  return [
    ['malformed JSON', rawJson('{"externalRunId": "x",')],
    ['a JSON array', json([valid])],
    ['a JSON string', json('hello')],
    ['__proto__ key at the top', rawJson(`{"__proto__": {"polluted": true}, ${JSON.stringify(valid).slice(1)}`)],
    ['__proto__ key nested', rawJson(JSON.stringify({ ...valid, [objectField]: { safe: 1 } }).replace('"safe":1', '"__proto__":{"polluted":true}'))],
    ['constructor.prototype key', rawJson(JSON.stringify({ ...valid, [objectField]: { safe: 1 } }).replace('"safe":1', '"constructor":{"prototype":{"polluted":true}}'))],
    ['NUL in a nested string', json({ ...valid, [objectField]: { deep: { list: ['ok', 'bad\u0000value'] } } })],
    ['NUL in a nested key', json({ ...valid, [objectField]: { ['k\u0000ey']: 1 } })],
    ['an unpaired surrogate', json({ ...valid, [objectField]: { s: 'x\ud800y' } })],
    ['nesting 600 levels deep', json({ ...valid, [objectField]: nested(600) })],
    ['an array where an object belongs', json({ ...valid, [objectField]: [1, 2] })],
    ['a string where an object belongs', json({ ...valid, [objectField]: 'text' })],
    ['text/plain body', { payload: JSON.stringify(valid), headers: { 'content-type': 'text/plain' } }],
  ];
}
