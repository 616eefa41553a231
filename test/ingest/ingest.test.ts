import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, readRun, seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import { bigObject, expectError, hostileBodies, permissiveLimiter, runsOf } from '../runtime-api/support.ts';

const T0 = new Date('2030-02-01T12:00:00.000Z');
const clock = new ManualClock(T0);
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock, limiter: permissiveLimiter });
});
afterAll(() => t.close());

const standalone = (o: Parameters<typeof seedAgent>[1] = {}) => seedAgent(t, { managed_by: 'standalone', allow_external_triggers: false, ...o });
const url = (a: SeededAgent) => `/api/agents/${a.agent.id}/runs/ingest`;
const ingest = (a: SeededAgent, payload: unknown, headers: Record<string, string> = a.ingestAuth) =>
  t.app.inject({ method: 'POST', url: url(a), headers, payload: payload as object });
const iso = (d: Date) => d.toISOString();

describe('POST /api/agents/{agentId}/runs/ingest', () => {
  it('spec 4.5 / part 3: the first call creates the run in the status given and answers 200 {runId, status: created}', async () => {
    const a = await standalone();
    const res = await ingest(a, { externalRunId: 'e1', status: 'running', metadata: { host: 'cron-1' } });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toEqual({ runId: expect.any(Number), status: 'created' });
    const row = (await readRun(t, res.json().runId))!;
    expect(row).toMatchObject({ agent_id: a.agent.id, status: 'running', source: 'ingest', external_run_id: 'e1', metadata: { host: 'cron-1' } });
    expect(row.started_at).toEqual(clock.now()); // spec 2.2: stamped at the first start
    expect(row.next_poll_at).toBeNull(); // the service never polls a standalone agent
  });

  it('spec 4.5: repeated calls move the run forward (updated), stamping started_at once and the terminal fields', async () => {
    const a = await standalone();
    const created = await ingest(a, { externalRunId: 'life', status: 'queued' });
    const runId = created.json().runId;
    expect((await readRun(t, runId))!.started_at).toBeNull();

    clock.advance(1_000);
    const startedAt = clock.now();
    expect((await ingest(a, { externalRunId: 'life', status: 'running' })).json()).toEqual({ runId, status: 'updated' });
    expect((await readRun(t, runId))!.started_at).toEqual(startedAt);

    clock.advance(1_000);
    const later = new Date(clock.now().getTime() - 10_000);
    await ingest(a, { externalRunId: 'life', status: 'running', startedAt: iso(later) });
    expect((await readRun(t, runId))!.started_at).toEqual(startedAt); // spec 2.2: "never reset"

    clock.advance(3_000);
    const done = await ingest(a, { externalRunId: 'life', status: 'completed', output: { answer: 42 }, outputs: 3 });
    expect(done.json()).toEqual({ runId, status: 'updated' });
    const row = (await readRun(t, runId))!;
    expect(row).toMatchObject({ status: 'completed', output_data: { answer: 42 }, outputs: 3, duration_ms: 4_000 });
    expect(row.completed_at).toEqual(clock.now());
  });

  it('spec 4.5: startedAt, completedAt and durationMs from the request are what is stored', async () => {
    const a = await standalone();
    const startedAt = new Date('2030-01-31T08:00:00.000Z');
    const completedAt = new Date('2030-01-31T08:00:07.250Z');
    const r1 = await ingest(a, { externalRunId: 'times', status: 'failed', startedAt: iso(startedAt), completedAt: '2030-01-31T09:00:07.25+01:00', error: 'boom' });
    const row1 = (await readRun(t, r1.json().runId))!;
    expect(row1).toMatchObject({ status: 'failed', error: 'boom', duration_ms: 7_250 });
    expect(row1.started_at).toEqual(startedAt);
    expect(row1.completed_at).toEqual(completedAt);

    const r2 = await ingest(a, { externalRunId: 'given-duration', status: 'completed', durationMs: 1234.6 });
    expect((await readRun(t, r2.json().runId))!.duration_ms).toBe(1235); // whole milliseconds
  });

  it('spec 4.5: repeating the same terminal status updates the record without re-stamping completed_at', async () => {
    const a = await standalone();
    const r = await ingest(a, { externalRunId: 'twice', status: 'completed', output: { v: 1 }, outputs: 1 });
    const before = (await readRun(t, r.json().runId))!;
    clock.advance(60_000);
    const again = await ingest(a, { externalRunId: 'twice', status: 'completed', output: { v: 2 } });
    expect(again.json()).toEqual({ runId: r.json().runId, status: 'updated' });
    const after = (await readRun(t, r.json().runId))!;
    expect(after).toMatchObject({ output_data: { v: 2 }, outputs: 1, duration_ms: before.duration_ms });
    expect(after.completed_at).toEqual(before.completed_at);
  });

  it.each([
    ['running after completed', 'completed', 'running'],
    ['failed after completed', 'completed', 'failed'],
    ['completed after cancelled', 'cancelled', 'completed'],
    ['queued after running', 'running', 'queued'],
  ])('spec 3 rule 1: %s is 409 backward_transition and changes nothing', async (_label, first, then) => {
    const a = await standalone();
    const r = await ingest(a, { externalRunId: 'back', status: first, output: { kept: true } });
    const before = await readRun(t, r.json().runId);
    const body = expectError(await ingest(a, { externalRunId: 'back', status: then, output: { lost: true }, error: 'x' }), 409, 'backward_transition');
    expect(body.runId).toBe(r.json().runId);
    expect(await readRun(t, r.json().runId)).toEqual(before);
  });

  it('spec 4.5: metadata given later replaces the stored metadata; absent keeps it', async () => {
    const a = await standalone();
    const r = await ingest(a, { externalRunId: 'meta', status: 'running', metadata: { a: 1 } });
    await ingest(a, { externalRunId: 'meta', status: 'running' });
    expect((await readRun(t, r.json().runId))!.metadata).toEqual({ a: 1 });
    await ingest(a, { externalRunId: 'meta', status: 'completed', metadata: { b: 2 } });
    expect((await readRun(t, r.json().runId))!.metadata).toEqual({ b: 2 });
  });

  it.each([[-1], [1.5], ['3'], [1e20], [null], [{ n: 1 }], [true]])('spec 2.2: outputs %j is silently dropped (200)', async (outputs) => {
    const a = await standalone();
    const r = await ingest(a, { externalRunId: 'o', status: 'running', outputs: 2 });
    const res = await ingest(a, { externalRunId: 'o', status: 'completed', outputs });
    expect(res.statusCode).toBe(200);
    expect((await readRun(t, r.json().runId))!.outputs).toBe(2);
  });

  describe('spec 4.5 userId', () => {
    it('is applied on the first call only, and a non-member or malformed one is dropped silently', async () => {
      const orgId = await seedOrg(t);
      const a = await standalone({ orgId });
      const m1 = await seedUser(t, { orgId });
      const m2 = await seedUser(t, { orgId });
      const r = await ingest(a, { externalRunId: 'u', status: 'running', userId: m1 });
      await ingest(a, { externalRunId: 'u', status: 'completed', userId: m2 });
      expect((await readRun(t, r.json().runId))!.created_by).toBe(m1);

      const outsider = await seedUser(t, { orgId: await seedOrg(t) });
      for (const [i, userId] of [outsider, randomUUID(), 'nope', null].entries()) {
        const res = await ingest(a, { externalRunId: `u-${i}`, status: 'queued', userId });
        expect(res.statusCode).toBe(200);
        expect((await readRun(t, res.json().runId))!.created_by).toBeNull();
      }
    });
  });

  it('spec 4.5 ("managed_by=standalone" only): a platform agent is 403 not_eligible and nothing is written', async () => {
    const a = await seedAgent(t, { managed_by: 'platform' });
    expectError(await ingest(a, { externalRunId: 'p', status: 'running' }), 403, 'not_eligible');
    expect(await runsOf(t, a.agent.id)).toHaveLength(0);
  });

  it('spec 4.5: a paused standalone agent may still report (status gates triggering only, spec 2.1)', async () => {
    const a = await standalone({ status: 'paused' });
    expect((await ingest(a, { externalRunId: 'paused', status: 'completed' })).statusCode).toBe(200);
  });

  it('spec part 5: a missing, wrong or other agent\'s key, or an unknown agent, is 401 and writes nothing', async () => {
    const a = await standalone();
    const b = await standalone();
    const before = await countRows(t, 'runs');
    for (const headers of [{}, { authorization: 'Bearer nope' }, b.ingestAuth, a.agentAuth]) {
      expectError(await ingest(a, { externalRunId: 'x', status: 'running' }, headers as Record<string, string>), 401, 'unauthorized');
    }
    const res = await t.app.inject({ method: 'POST', url: '/api/agents/987654/runs/ingest', headers: a.ingestAuth, payload: { externalRunId: 'x', status: 'running' } });
    expectError(res, 401);
    expect(await countRows(t, 'runs')).toBe(before);
  });

  describe('spec 4.5 / 8.4 validation: 400 naming the field, nothing written', () => {
    const ok = { externalRunId: 'v', status: 'running' };
    it.each([
      ['externalRunId missing', { status: 'running' }, /externalRunId is required/],
      ['externalRunId empty', { ...ok, externalRunId: '' }, /externalRunId/],
      ['externalRunId 256 characters', { ...ok, externalRunId: 'x'.repeat(256) }, /externalRunId/],
      ['externalRunId a number', { ...ok, externalRunId: 7 }, /externalRunId/],
      ['status missing', { externalRunId: 'v' }, /status is required/],
      ['status waiting (not reportable)', { ...ok, status: 'waiting' }, /status/],
      ['status in capitals', { ...ok, status: 'RUNNING' }, /status/],
      ['startedAt not a date', { ...ok, startedAt: 'yesterday' }, /startedAt/],
      ['startedAt a date without a time', { ...ok, startedAt: '2030-01-01' }, /startedAt/],
      ['startedAt without an offset', { ...ok, startedAt: '2030-01-01T10:00:00' }, /startedAt/],
      ['startedAt a number', { ...ok, startedAt: 1_700_000_000_000 }, /startedAt/],
      ['completedAt a leap second Date cannot hold', { ...ok, status: 'completed', completedAt: '2030-06-30T23:59:60Z' }, /completedAt/],
      ['durationMs negative', { ...ok, durationMs: -1 }, /durationMs/],
      ['durationMs a string', { ...ok, durationMs: '5' }, /durationMs/],
      ['durationMs beyond 2^53', { ...ok, durationMs: 1e300 }, /durationMs/],
      ['output an array', { ...ok, output: [1] }, /output/],
      ['error of 4097 characters', { ...ok, status: 'failed', error: 'e'.repeat(4097) }, /error/],
      ['error an object', { ...ok, status: 'failed', error: { message: 'x' } }, /error/],
      ['metadata a string', { ...ok, metadata: 'm' }, /metadata/],
      ['userId a number', { ...ok, userId: 5 }, /userId/],
      ['NUL in externalRunId', { ...ok, externalRunId: 'a\u0000' }, /externalRunId .*NUL/],
      ['NUL in error', { ...ok, status: 'failed', error: 'bad\u0000' }, /body\.error .*NUL/],
      ['NUL deep in output', { ...ok, output: { a: [{ b: '\u0000' }] } }, /body\.output\.a\.0\.b .*NUL/],
      ['NUL deep in metadata', { ...ok, metadata: { x: { y: 'z\u0000' } } }, /body\.metadata\.x\.y/],
    ])('%s', async (_label, payload, message) => {
      const a = await standalone();
      const body = expectError(await ingest(a, payload), 400, 'invalid_body');
      expect(body.error).toMatch(message);
      expect(await runsOf(t, a.agent.id)).toHaveLength(0);
    });

    it('an error of exactly 4096 characters is accepted', async () => {
      const a = await standalone();
      const res = await ingest(a, { externalRunId: 'e4096', status: 'failed', error: 'e'.repeat(4096) });
      expect(res.statusCode).toBe(200);
      expect((await readRun(t, res.json().runId))!.error).toBe('e'.repeat(4096));
    });

    it('a bad update is refused without touching the existing run', async () => {
      const a = await standalone();
      const r = await ingest(a, { externalRunId: 'keep', status: 'running', output: { v: 1 } });
      const before = await readRun(t, r.json().runId);
      expectError(await ingest(a, { externalRunId: 'keep', status: 'completed', output: { v: '\u0000' } }), 400);
      expectError(await ingest(a, { externalRunId: 'keep', status: 'completed', completedAt: 'soon' }), 400);
      expect(await readRun(t, r.json().runId)).toEqual(before);
    });

    it.each(hostileBodies({ externalRunId: 'hostile', status: 'running' }, 'output'))('%s is a 4xx with a JSON error and writes nothing', async (_label, req) => {
      const a = await standalone();
      const res = await t.app.inject({ method: 'POST', url: url(a), ...req, headers: { ...a.ingestAuth, ...req.headers } } as never);
      expectError(res, '4xx');
      expect(await runsOf(t, a.agent.id)).toHaveLength(0);
    });
  });

  it('spec 8.4: a 2 MiB output is accepted and stored', async () => {
    const a = await standalone();
    const output = bigObject(2 * 1024 * 1024);
    const res = await ingest(a, { externalRunId: 'big', status: 'completed', output });
    expect(res.statusCode).toBe(200);
    expect((await readRun(t, res.json().runId))!.output_data).toEqual(output);
  });

  it('spec 6: an ingested completion queues the agent\'s completed webhook action once, however often it is repeated', async () => {
    const a = await standalone();
    const actionId = randomUUID();
    await t.db.query(`INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc) VALUES ($1, $2, 'completed', 'https://hooks.example.test/x', $3)`, [
      actionId,
      a.agent.id,
      t.ctx.secrets.seal('whsec', sealedAt('webhook_actions', 'signing_secret_enc', actionId)),
    ]);
    const r = await ingest(a, { externalRunId: 'hooked', status: 'completed', output: { ok: true } });
    await ingest(a, { externalRunId: 'hooked', status: 'completed', output: { ok: true } });
    const { rows } = await t.db.query<{ event: string }>('SELECT event FROM outbox WHERE run_id = $1', [r.json().runId]);
    expect(rows).toEqual([{ event: 'completed' }]);
  });

  describe('concurrency (spec 4.5: idempotent on agentId + externalRunId)', () => {
    it('20 simultaneous first calls make one run: one created, the rest updated, no 5xx', async () => {
      const a = await standalone();
      const answers = await Promise.all(Array.from({ length: 20 }, () => ingest(a, { externalRunId: 'race', status: 'running' })));
      expect(answers.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
      expect(answers.filter((r) => r.json().status === 'created')).toHaveLength(1);
      expect(new Set(answers.map((r) => r.json().runId)).size).toBe(1);
      expect(await runsOf(t, a.agent.id)).toHaveLength(1);
    });

    it('simultaneous first calls with different statuses end in one run, each answer 200 or 409', async () => {
      const a = await standalone();
      const statuses = ['queued', 'running', 'completed', 'failed', 'running', 'completed', 'queued', 'cancelled'];
      const answers = await Promise.all(statuses.map((status) => ingest(a, { externalRunId: 'mixed', status })));
      for (const r of answers) expect([200, 409]).toContain(r.statusCode);
      const rows = await runsOf(t, a.agent.id);
      expect(rows).toHaveLength(1);
      expect(['completed', 'failed', 'cancelled']).toContain(rows[0]!.status);
    });
  });
});

describe('issue 38: a caller\'s time in the future', () => {
  it('spec 4.5 / issue 38: startedAt or completedAt more than 5 minutes ahead of the service is 400 naming the field; within the skew it is stored', async () => {
    const a = await standalone();
    const ahead = (ms: number) => iso(new Date(clock.now().getTime() + ms));
    for (const field of ['startedAt', 'completedAt']) {
      const res = await ingest(a, { externalRunId: `future-${field}`, status: 'completed', [field]: ahead(5 * 60_000 + 1_000) });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json()).toMatchObject({ code: 'invalid_body', error: `body.${field} must not be more than 5 minutes in the future (clock skew allowed)` });
      const century = await ingest(a, { externalRunId: `century-${field}`, status: 'completed', [field]: '2130-01-01T00:00:00Z' });
      expect(century.statusCode).toBe(400);
    }
    expect(await countRows(t, 'runs')).toBeGreaterThan(0);
    expect((await t.db.query('SELECT 1 FROM runs WHERE agent_id = $1', [a.agent.id])).rows).toHaveLength(0); // nothing written
    const skewed = await ingest(a, { externalRunId: 'skewed', status: 'completed', startedAt: ahead(-1_000), completedAt: ahead(4 * 60_000) });
    expect(skewed.statusCode, skewed.body).toBe(200);
    expect((await readRun(t, skewed.json().runId))!.completed_at).toEqual(new Date(clock.now().getTime() + 4 * 60_000));
  });
});

describe('POST /ingest body ceiling (decisions.md ARS_MAX_JSON_BODY_BYTES)', () => {
  it('answers 413 above config.maxJsonBodyBytes and writes nothing', async () => {
    const small = await createTestApp({ config: { maxJsonBodyBytes: 4096 } });
    try {
      const a = await seedAgent(small, { managed_by: 'standalone' });
      const res = await small.app.inject({ method: 'POST', url: url(a), headers: a.ingestAuth, payload: { externalRunId: 'x', status: 'completed', output: bigObject(5000) } });
      expectError(res, 413, 'payload_too_large');
      expect(await countRows(small, 'runs')).toBe(0);
    } finally {
      await small.close();
    }
  });
});
