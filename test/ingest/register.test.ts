import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, readRun, seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { decodeJwt } from 'jose';
import { verifyCredentialsToken } from '../../src/lib/jwt.ts';
import { credentialsSecretOf } from '../../src/agents/agent-tokens.ts';
import { bigObject, expectError, hostileBodies, permissiveLimiter, runsOf, seedConnection } from '../runtime-api/support.ts';

const clock = new ManualClock(new Date('2030-01-01T10:00:00.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock, limiter: permissiveLimiter });
});
afterAll(() => t.close());

const url = (a: SeededAgent) => `/api/agents/${a.agent.id}/runs/register`;
const register = (a: SeededAgent, payload: unknown, headers: Record<string, string> = a.ingestAuth) =>
  t.app.inject({ method: 'POST', url: url(a), headers, payload: payload as object });
const secretOf = (a: SeededAgent) => credentialsSecretOf(t.ctx, a.agent);

describe('POST /api/agents/{agentId}/runs/register', () => {
  it('spec 4.4 / part 3: creates a running run with no queued step and answers 201 {runId} alone without connections', async () => {
    const a = await seedAgent(t);
    const res = await register(a, { externalRunId: 'ext-1', input: { q: 'hi', nested: { n: 1 } }, metadata: { m: true } });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({ runId: expect.any(Number) });
    const row = (await readRun(t, body.runId))!;
    expect(row).toMatchObject({
      agent_id: a.agent.id,
      status: 'running',
      source: 'register',
      external_run_id: 'ext-1',
      input: { q: 'hi', nested: { n: 1 } },
      metadata: { m: true },
      created_by: null,
    });
    expect((row.started_at as Date).toISOString()).toBe(clock.now().toISOString());
    // Followed by polling like any run on a runtime (decisions.md: the running timeout applies on the next poll);
    // the first poll is due at once: it checks the id names a run of the agent's own task (issue 12).
    expect((row.next_poll_at as Date).getTime()).toBe(clock.now().getTime());
  });

  it('spec 4.4: with active connections answers credentialsToken, expiresInSeconds 3600 and connectionIds together', async () => {
    const a = await seedAgent(t);
    const slack = await seedConnection(t, a.agent.id, 'slack');
    const github = await seedConnection(t, a.agent.id, 'github');
    await seedConnection(t, a.agent.id, 'jira', false); // inactive: "a requirement nobody connected is an absent key"
    const res = await register(a, { externalRunId: 'with-conns' });
    expect(res.statusCode).toBe(201);
    const body = res.json();
    expect(body).toEqual({
      runId: expect.any(Number),
      credentialsToken: expect.any(String),
      expiresInSeconds: 3600,
      connectionIds: { github: { integrationId: 'github', connectionId: github }, slack: { integrationId: 'slack', connectionId: slack } },
    });
    const verified = await verifyCredentialsToken(body.credentialsToken, secretOf(a), clock.now());
    expect(verified).toEqual({ ok: true, agentId: a.agent.id, runId: body.runId });
  });

  it('spec 4.4: an agent whose connections are all inactive gets neither token nor connectionIds', async () => {
    const a = await seedAgent(t);
    await seedConnection(t, a.agent.id, 'slack', false);
    const res = await register(a, { externalRunId: 'inactive-only' });
    expect(res.statusCode).toBe(201);
    expect(Object.keys(res.json())).toEqual(['runId']);
  });

  it('spec 4.4: repeating the call returns the same runId (201) and keeps the first input', async () => {
    const a = await seedAgent(t);
    await seedConnection(t, a.agent.id, 'slack');
    const first = await register(a, { externalRunId: 'again', input: { v: 1 }, metadata: { first: true } });
    clock.advance(5_000);
    const second = await register(a, { externalRunId: 'again', input: { v: 2 }, metadata: { second: true } });
    expect(first.statusCode).toBe(201);
    expect(second.statusCode).toBe(201);
    expect(second.json().runId).toBe(first.json().runId);
    const rows = await runsOf(t, a.agent.id);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ input: { v: 1 }, metadata: { first: true } });
  });

  // Issue 12 finding 5: every repeat used to mint a fresh 60-minute token, so a caller could keep a run's
  // credentials alive forever. Spec part 5: "minted once, at trigger or register", "no refresh".
  it('spec part 5 / issue 12: a repeat answers the first token itself (same iat and exp), with the seconds it has left', async () => {
    const a = await seedAgent(t);
    await seedConnection(t, a.agent.id, 'slack');
    const first = (await register(a, { externalRunId: 'once' })).json();
    const firstClaims = decodeJwt(first.credentialsToken);
    clock.advance(25 * 60_000);
    const second = (await register(a, { externalRunId: 'once' })).json();
    expect(second.runId).toBe(first.runId);
    expect(second.credentialsToken).toBe(first.credentialsToken);
    expect(decodeJwt(second.credentialsToken)).toEqual(firstClaims);
    expect(second.expiresInSeconds).toBe(3600 - 25 * 60);
    expect(second.connectionIds).toEqual(first.connectionIds);
  });

  it('spec part 5 / issue 12: once the token has expired a repeat gets neither token nor connectionIds (no refresh)', async () => {
    const a = await seedAgent(t);
    await seedConnection(t, a.agent.id, 'slack');
    const first = (await register(a, { externalRunId: 'expiring' })).json();
    clock.advance(3600_000 - 1_000);
    const late = (await register(a, { externalRunId: 'expiring' })).json();
    expect(late).toMatchObject({ runId: first.runId, credentialsToken: first.credentialsToken, expiresInSeconds: 1 });
    clock.advance(1_000);
    const after = (await register(a, { externalRunId: 'expiring' })).json();
    expect(after).toEqual({ runId: first.runId });
    expect((await verifyCredentialsToken(first.credentialsToken, secretOf(a), clock.now())).ok).toBe(false);
  });

  it('spec part 5 / issue 12: registering the external id of a triggered run answers the token of its trigger', async () => {
    const a = await seedAgent(t);
    await seedConnection(t, a.agent.id, 'slack');
    // The trigger path mints at the run's creation (start-run.ts); a run inserted the same way stands in for it.
    const created = new Date(clock.now().getTime() - 10 * 60_000);
    const { rows } = await t.db.query<{ id: number }>(
      `INSERT INTO runs (agent_id, status, source, external_run_id, created_at, updated_at) VALUES ($1, 'running', 'api', 'run_trig', $2, $2) RETURNING id`,
      [a.agent.id, created],
    );
    const body = (await register(a, { externalRunId: 'run_trig' })).json();
    expect(body.runId).toBe(rows[0]!.id);
    expect(decodeJwt(body.credentialsToken)).toMatchObject({ run_id: rows[0]!.id, iat: created.getTime() / 1000, exp: created.getTime() / 1000 + 3600 });
    expect(body.expiresInSeconds).toBe(3000);
  });

  it('spec 4.4: the same externalRunId on two agents is two runs', async () => {
    const a = await seedAgent(t);
    const b = await seedAgent(t);
    const ra = await register(a, { externalRunId: 'shared' });
    const rb = await register(b, { externalRunId: 'shared' });
    expect(ra.json().runId).not.toBe(rb.json().runId);
  });

  it('spec 4.4: 50 simultaneous identical calls make one run and all answer 201 with its runId', async () => {
    const a = await seedAgent(t);
    await seedConnection(t, a.agent.id, 'slack');
    const answers = await Promise.all(Array.from({ length: 50 }, () => register(a, { externalRunId: 'stampede', input: { x: 1 } })));
    expect(answers.map((r) => r.statusCode)).toEqual(Array(50).fill(201));
    const ids = new Set(answers.map((r) => r.json().runId));
    expect(ids.size).toBe(1);
    // One run, one token: every answer carries the same one (spec part 5, issue 12).
    expect(new Set(answers.map((r) => r.json().credentialsToken)).size).toBe(1);
    expect(typeof answers[0]!.json().credentialsToken).toBe('string');
    expect(await runsOf(t, a.agent.id)).toHaveLength(1);
  });

  describe('spec 4.4 userId attribution', () => {
    it('records a member of the agent organization and a platform admin of another', async () => {
      const orgId = await seedOrg(t);
      const a = await seedAgent(t, { orgId });
      const member = await seedUser(t, { orgId });
      const admin = await seedUser(t, { platformAdmin: true });
      const r1 = await register(a, { externalRunId: 'by-member', userId: member });
      const r2 = await register(a, { externalRunId: 'by-admin', userId: admin.toUpperCase() });
      expect((await readRun(t, r1.json().runId))!.created_by).toBe(member);
      expect((await readRun(t, r2.json().runId))!.created_by).toBe(admin);
    });

    it('drops a non-member, an unknown uuid, a non-uuid string and null silently (201, no creator)', async () => {
      const a = await seedAgent(t);
      const outsider = await seedUser(t, { orgId: await seedOrg(t) });
      for (const [i, userId] of [outsider, '00000000-0000-4000-8000-000000000000', 'not-a-uuid', '', null].entries()) {
        const res = await register(a, { externalRunId: `drop-${i}`, userId });
        expect(res.statusCode, String(userId)).toBe(201);
        expect((await readRun(t, res.json().runId))!.created_by).toBeNull();
      }
    });

    it('applies only on the first call for an externalRunId', async () => {
      const orgId = await seedOrg(t);
      const a = await seedAgent(t, { orgId });
      const m1 = await seedUser(t, { orgId });
      const m2 = await seedUser(t, { orgId });
      const first = await register(a, { externalRunId: 'attr-once', userId: m1 });
      await register(a, { externalRunId: 'attr-once', userId: m2 });
      expect((await readRun(t, first.json().runId))!.created_by).toBe(m1);
    });

    it('a userId that is not a string is a 422 naming the field (a wrong type, not an unknown user)', async () => {
      const a = await seedAgent(t);
      const body = expectError(await register(a, { externalRunId: 'typed', userId: 42 }), 422, 'validation_failed');
      expect(body.error).toMatch(/userId/);
      expect(await runsOf(t, a.agent.id)).toHaveLength(0);
    });
  });

  describe('spec 4.4 eligibility (same as /trigger) and part 5 auth', () => {
    it.each([
      ['a standalone agent', { managed_by: 'standalone' as const }],
      ['a paused agent', { status: 'paused' as const }],
      ['an archived agent', { status: 'archived' as const }],
      ['external triggers off', { allow_external_triggers: false }],
    ])('%s is 403 not_eligible and writes nothing', async (_label, overrides) => {
      const a = await seedAgent(t, overrides);
      expectError(await register(a, { externalRunId: 'nope' }), 403, 'not_eligible');
      expect(await runsOf(t, a.agent.id)).toHaveLength(0);
    });

    it('a missing, wrong or other agent\'s ingest key, an agent key, or an unknown agent is 401 and writes nothing', async () => {
      const a = await seedAgent(t);
      const b = await seedAgent(t);
      const before = await countRows(t, 'runs');
      for (const headers of [{}, { authorization: 'Bearer ars_ingest_wrong' }, b.ingestAuth, a.agentAuth, { authorization: a.ingestKey }]) {
        expectError(await register(a, { externalRunId: 'x' }, headers as Record<string, string>), 401, 'unauthorized');
      }
      for (const id of ['999999', 'abc', '0', '-1', '1e3']) {
        const res = await t.app.inject({ method: 'POST', url: `/api/agents/${id}/runs/register`, headers: a.ingestAuth, payload: { externalRunId: 'x' } });
        expectError(res, 401, 'unauthorized');
      }
      expect(await countRows(t, 'runs')).toBe(before);
    });
  });

  describe('spec 4.4 validation: 422 naming the field, nothing written', () => {
    it.each([
      ['externalRunId missing', {}, /externalRunId is required/],
      ['externalRunId empty', { externalRunId: '' }, /externalRunId/],
      ['externalRunId 256 characters', { externalRunId: 'x'.repeat(256) }, /externalRunId/],
      ['externalRunId 1 MB', { externalRunId: 'x'.repeat(1_000_000) }, /externalRunId/],
      ['externalRunId a number', { externalRunId: 12345 }, /externalRunId/],
      ['externalRunId null', { externalRunId: null }, /externalRunId/],
      ['externalRunId with a NUL', { externalRunId: 'ab\u0000c' }, /externalRunId.*NUL/],
      ['input an array', { externalRunId: 'v', input: [1] }, /input/],
      ['input a string', { externalRunId: 'v', input: 'x' }, /input/],
      ['input with a NUL deep inside', { externalRunId: 'v', input: { a: { b: ['ok', 'n\u0000ul'] } } }, /body\.input\.a\.b\.1 .*NUL/],
      ['metadata an array', { externalRunId: 'v', metadata: [] }, /metadata/],
      ['metadata with a NUL in a key', { externalRunId: 'v', metadata: { ['k\u0000']: 1 } }, /body\.metadata\.k\\u0000 has a key .*NUL/],
      ['metadata with an unpaired surrogate', { externalRunId: 'v', metadata: { s: '\udc00' } }, /metadata\.s .*surrogate/],
    ])('%s', async (_label, payload, message) => {
      const a = await seedAgent(t);
      const body = expectError(await register(a, payload), 422, 'validation_failed');
      expect(body.error).toMatch(message);
      expect(await runsOf(t, a.agent.id)).toHaveLength(0);
    });

    it('accepts externalRunId of exactly 1 and 255 characters', async () => {
      const a = await seedAgent(t);
      expect((await register(a, { externalRunId: 'x' })).statusCode).toBe(201);
      expect((await register(a, { externalRunId: 'y'.repeat(255) })).statusCode).toBe(201);
      // 255 characters, not bytes: multi-byte characters count once.
      expect((await register(a, { externalRunId: 'é'.repeat(255) })).statusCode).toBe(201);
      expectError(await register(a, { externalRunId: '😀'.repeat(256) }), 422, 'validation_failed');
    });

    it('unknown top-level fields are ignored; input passes through untouched', async () => {
      const a = await seedAgent(t);
      const input = { constructor: 'plain key', prototype: 1, list: [null, { deep: 'é😀' }] };
      const res = await register(a, { externalRunId: 'extra', input, somethingElse: true });
      expect(res.statusCode).toBe(201);
      expect((await readRun(t, res.json().runId))!.input).toEqual(input);
    });

    it.each(hostileBodies({ externalRunId: 'hostile' }, 'input'))('%s is a 4xx with a JSON error and writes nothing', async (_label, req) => {
      const a = await seedAgent(t);
      const res = await t.app.inject({ method: 'POST', url: url(a), ...req, headers: { ...a.ingestAuth, ...req.headers } } as never);
      expectError(res, '4xx');
      expect(await runsOf(t, a.agent.id)).toHaveLength(0);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('malformed JSON is 400 invalid_json; a forbidden __proto__ key is 400', async () => {
      const a = await seedAgent(t);
      const headers = { ...a.ingestAuth, 'content-type': 'application/json' };
      expectError(await t.app.inject({ method: 'POST', url: url(a), headers, payload: '{"externalRunId":' }), 400, 'invalid_json');
      expectError(await t.app.inject({ method: 'POST', url: url(a), headers, payload: '{"externalRunId":"p","__proto__":{"x":1}}' }), 400);
    });
  });

  it('spec 8.4: a 2 MiB input is accepted and stored whole', async () => {
    const a = await seedAgent(t);
    const input = bigObject(2 * 1024 * 1024);
    const res = await register(a, { externalRunId: 'big', input });
    expect(res.statusCode).toBe(201);
    expect((await readRun(t, res.json().runId))!.input).toEqual(input);
  });
});

describe('POST /register body ceiling (decisions.md ARS_MAX_JSON_BODY_BYTES)', () => {
  it('answers 413 above config.maxJsonBodyBytes and writes nothing', async () => {
    const small = await createTestApp({ config: { maxJsonBodyBytes: 4096 } });
    try {
      const a = await seedAgent(small);
      const res = await small.app.inject({ method: 'POST', url: url(a), headers: a.ingestAuth, payload: { externalRunId: 'x', input: bigObject(5000) } });
      expectError(res, 413, 'payload_too_large');
      const ok = await small.app.inject({ method: 'POST', url: url(a), headers: a.ingestAuth, payload: { externalRunId: 'x', input: bigObject(3000) } });
      expect(ok.statusCode).toBe(201);
      expect(await countRows(small, 'runs')).toBe(1);
    } finally {
      await small.close();
    }
  });
});
