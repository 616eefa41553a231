import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import type { RunStatus } from '../../src/runs/run-states.ts';
import { bigObject, expectError, permissiveLimiter, seedRun } from './support.ts';

const clock = new ManualClock(new Date('2030-03-01T09:00:00.000Z'));
let t: TestApp;
let task: SeededAgent; // platform agent on a task runtime (supports waitpoints)
let workflow: SeededAgent; // platform agent on a workflow runtime (supports waitpoints too)
let standalone: SeededAgent; // no runtime at all
beforeAll(async () => {
  t = await createTestApp({ clock, limiter: permissiveLimiter });
  task = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
  workflow = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: 'http://127.0.0.1:9' } });
  standalone = await seedAgent(t, { managed_by: 'standalone' });
});
afterAll(() => t.close());

const callback = (runId: number | string, payload: unknown, headers: Record<string, string> = task.agentAuth) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers, payload: payload as object });
const runIn = async (status: RunStatus, agent: SeededAgent = task) => (await seedRun(t, agent.agent.id, status)).id;

function expectEmpty200(res: Awaited<ReturnType<typeof callback>>) {
  expect(res.statusCode, res.body).toBe(200);
  expect(res.body).toBe('');
}

describe('POST /api/runs/{runId}/callback', () => {
  describe('spec 4.8 type started', () => {
    it('moves a queued run to running, stamping started_at, with 200 and an empty body', async () => {
      const runId = await runIn('queued');
      clock.advance(2_000);
      expectEmpty200(await callback(runId, { type: 'started' }));
      const row = (await readRun(t, runId))!;
      expect(row.status).toBe('running');
      expect(row.started_at).toEqual(clock.now());
    });

    it.each(['running', 'waiting'] as const)('is a 200 no-op on a %s run', async (status) => {
      const runId = await runIn(status);
      const before = await readRun(t, runId);
      expectEmpty200(await callback(runId, { type: 'started' }));
      expect(await readRun(t, runId)).toEqual(before);
    });

    it.each(['completed', 'failed', 'cancelled'] as const)('is 409 backward_transition on a %s run', async (status) => {
      const runId = await runIn(status);
      const body = expectError(await callback(runId, { type: 'started' }), 409, 'backward_transition');
      expect(body.runId).toBe(runId);
      expect((await readRun(t, runId))!.status).toBe(status);
    });
  });

  describe('spec 4.8 type output', () => {
    it('without complete/failed records intermediate output and lifts a queued run to running', async () => {
      const runId = await runIn('queued');
      expectEmpty200(await callback(runId, { type: 'output', output: { step: 1 }, outputs: 2 }));
      expect(await readRun(t, runId)).toMatchObject({ status: 'running', output_data: { step: 1 }, outputs: 2 });
    });

    it('outputs: the latest non-null integer wins; non-integers and negatives are dropped silently (200)', async () => {
      const runId = await runIn('running');
      const steps: Array<[unknown, number]> = [[3, 3], [undefined, 3], [null, 3], [-1, 3], [2.5, 3], ['7', 3], [1e20, 3], [5, 5], [0, 0]];
      for (const [outputs, expected] of steps) {
        expectEmpty200(await callback(runId, { type: 'output', outputs }));
        expect((await readRun(t, runId))!.outputs, JSON.stringify(outputs)).toBe(expected);
      }
    });

    it('complete: true → completed with output_data, outputs, completed_at and duration', async () => {
      const runId = await runIn('running');
      clock.advance(5_000);
      expectEmpty200(await callback(runId, { type: 'output', complete: true, output: { answer: 42 }, outputs: 4 }));
      const row = (await readRun(t, runId))!;
      expect(row).toMatchObject({ status: 'completed', output_data: { answer: 42 }, outputs: 4, duration_ms: 5_000 });
      expect(row.completed_at).toEqual(clock.now());
    });

    it('complete: true on a waiting run completes it and clears the wait state', async () => {
      const runId = await runIn('running');
      expectEmpty200(await callback(runId, { type: 'waiting', tokenId: 'wp_1', description: 'approve?' }));
      expectEmpty200(await callback(runId, { type: 'output', complete: true }));
      expect(await readRun(t, runId)).toMatchObject({ status: 'completed', wait_state: null });
    });

    it('failed: true with error → failed, storing the error object {name, message, stack} only', async () => {
      const runId = await runIn('running');
      const error = { name: 'TypeError', message: 'x is undefined', stack: 'at line 1', secretish: 'dropped' };
      expectEmpty200(await callback(runId, { type: 'output', failed: true, error, output: { partial: true } }));
      expect(await readRun(t, runId)).toMatchObject({
        status: 'failed',
        error: { name: 'TypeError', message: 'x is undefined', stack: 'at line 1' },
        output_data: { partial: true },
      });
      expectEmpty200(await callback(await runIn('running'), { type: 'output', failed: true, error: {} }));
    });

    it.each([
      ['failed without error', { type: 'output', failed: true }, /body\.error is required/],
      ['failed with error null', { type: 'output', failed: true, error: null }, /body\.error is required/],
      ['failed with a string error', { type: 'output', failed: true, error: 'boom' }, /body\.error/],
      ['error.message not a string', { type: 'output', failed: true, error: { message: 1 } }, /body\.error\.message/],
      ['complete and failed both true', { type: 'output', complete: true, failed: true, error: {} }, /failed/],
      ['complete not a boolean', { type: 'output', complete: 'yes' }, /body\.complete/],
      ['output an array', { type: 'output', output: [1, 2] }, /body\.output/],
      ['output a string', { type: 'output', output: 'done' }, /body\.output/],
    ])('%s is 422 validation_failed and changes nothing', async (_label, payload, message) => {
      const runId = await runIn('running');
      const before = await readRun(t, runId);
      const body = expectError(await callback(runId, payload), 422, 'validation_failed');
      expect(body.error).toMatch(message);
      expect(await readRun(t, runId)).toEqual(before);
    });

    it('spec part 1: the same terminal status again is a 200 no-op; a different one is 409', async () => {
      const runId = await runIn('running');
      expectEmpty200(await callback(runId, { type: 'output', complete: true, output: { first: true } }));
      const before = await readRun(t, runId);
      clock.advance(1_000);
      expectEmpty200(await callback(runId, { type: 'output', complete: true, output: { second: true } }));
      expect(await readRun(t, runId)).toEqual(before); // first terminal write wins
      expectError(await callback(runId, { type: 'output', failed: true, error: { message: 'late' } }), 409, 'backward_transition');
      expectError(await callback(runId, { type: 'output', output: { late: true } }), 409, 'backward_transition');
      expect(await readRun(t, runId)).toEqual(before);
    });

    it('spec 3 rule 1: a callback after cancellation is 409', async () => {
      const runId = await runIn('cancelled');
      expectError(await callback(runId, { type: 'output', complete: true }), 409, 'backward_transition');
      expect((await readRun(t, runId))!.status).toBe('cancelled');
    });

    it('wakes local waiters through runWatch after an applied transition', async () => {
      const runId = await runIn('running');
      const seen: string[] = [];
      const stop = t.ctx.runWatch.watch(runId, (s) => seen.push(s));
      try {
        expectEmpty200(await callback(runId, { type: 'output', complete: true }));
      } finally {
        stop();
      }
      expect(seen).toContain('completed');
    });

    it('spec 8.4: a 2 MiB output is accepted and stored', async () => {
      const runId = await runIn('running');
      const output = bigObject(2 * 1024 * 1024);
      expectEmpty200(await callback(runId, { type: 'output', complete: true, output }));
      expect((await readRun(t, runId))!.output_data).toEqual(output);
    });
  });

  describe('spec 4.8 type waiting', () => {
    it.each([
      ['a task runtime', () => task],
      ['a workflow runtime', () => workflow],
    ])('on %s moves the run to waiting and stores the wait state', async (_label, agent) => {
      const a = agent();
      const runId = await runIn('running', a);
      const res = await callback(runId, { type: 'waiting', tokenId: 'waitpoint_abc', description: 'Approve the refund', url: 'https://app.example.test/review/1?x=1#f', output: { amount: 10 } }, a.agentAuth);
      expectEmpty200(res);
      expect(await readRun(t, runId)).toMatchObject({
        status: 'waiting',
        wait_state: { tokenId: 'waitpoint_abc', description: 'Approve the refund', url: 'https://app.example.test/review/1?x=1#f', output: { amount: 10 } },
      });
    });

    it('without url or output stores nulls; a waiting run may report a new token', async () => {
      const runId = await runIn('queued');
      expectEmpty200(await callback(runId, { type: 'waiting', tokenId: 't1', description: '' }));
      expect((await readRun(t, runId))!.wait_state).toEqual({ tokenId: 't1', description: '', url: null, output: null });
      expectEmpty200(await callback(runId, { type: 'waiting', tokenId: 't2', description: 'again', url: null }));
      expect((await readRun(t, runId))!.wait_state).toMatchObject({ tokenId: 't2' });
    });

    it.each([
      ['javascript:', 'javascript:alert(1)'],
      ['a relative URL', '/runs/1'],
      ['ftp:', 'ftp://files.example.test/x'],
      ['no scheme', 'example.test/review'],
      ['an empty string', ''],
      ['garbage', 'http://'],
      ['over 2048 characters', `https://example.test/${'a'.repeat(2048)}`],
      ['a number', 42],
      ['an object', { href: 'https://example.test' }],
      ['data:', 'data:text/html,<script>1</script>'],
    ])('a url that is %s is 400 invalid_url and changes nothing', async (_label, badUrl) => {
      const runId = await runIn('running');
      const before = await readRun(t, runId);
      const body = expectError(await callback(runId, { type: 'waiting', tokenId: 't', description: 'd', url: badUrl }), 400, 'invalid_url');
      expect(body.error).toMatch(/body\.url/);
      expect(await readRun(t, runId)).toEqual(before);
    });

    it.each([
      ['tokenId missing', { type: 'waiting', description: 'd' }, /body\.tokenId is required/],
      ['tokenId empty', { type: 'waiting', tokenId: '', description: 'd' }, /body\.tokenId/],
      ['tokenId a number', { type: 'waiting', tokenId: 1, description: 'd' }, /body\.tokenId/],
      ['description missing', { type: 'waiting', tokenId: 't' }, /body\.description is required/],
      ['description an object', { type: 'waiting', tokenId: 't', description: {} }, /body\.description/],
      ['output an array', { type: 'waiting', tokenId: 't', description: 'd', output: [] }, /body\.output/],
    ])('%s is 422 and changes nothing', async (_label, payload, message) => {
      const runId = await runIn('running');
      const before = await readRun(t, runId);
      const body = expectError(await callback(runId, payload), 422, 'validation_failed');
      expect(body.error).toMatch(message);
      expect(await readRun(t, runId)).toEqual(before);
    });

    it('an agent without a runtime that implements waitpoints (standalone) gets 409 waitpoint_unavailable', async () => {
      const runId = await runIn('running', standalone);
      expectError(await callback(runId, { type: 'waiting', tokenId: 't', description: 'd' }, standalone.agentAuth), 409, 'waitpoint_unavailable');
      expect((await readRun(t, runId))!.status).toBe('running');
    });

    it.each(['completed', 'failed', 'cancelled'] as const)('on a %s run is 409', async (status) => {
      const runId = await runIn(status);
      expectError(await callback(runId, { type: 'waiting', tokenId: 't', description: 'd' }), 409, 'backward_transition');
    });
  });

  describe('spec 4.8 body union', () => {
    it.each([
      ['an unknown type', { type: 'finished' }],
      ['no type', { output: {} }],
      ['type not a string', { type: 1 }],
      ['an empty object', {}],
    ])('%s is 422 naming body.type', async (_label, payload) => {
      const runId = await runIn('running');
      const body = expectError(await callback(runId, payload), 422, 'validation_failed');
      expect(body.error).toMatch(/body\.type/);
    });

    it('well-typed fields of other types are ignored (a url on output, a tokenId on started)', async () => {
      const runId = await runIn('queued');
      expectEmpty200(await callback(runId, { type: 'started', tokenId: 'x', url: 'javascript:1' }));
      expectEmpty200(await callback(runId, { type: 'output', url: 'not a url', description: 'n/a', output: { ok: 1 } }));
      expect(await readRun(t, runId)).toMatchObject({ status: 'running', output_data: { ok: 1 }, wait_state: null });
    });
  });

  describe('spec 4.8 / part 7: 404 and 401', () => {
    it('a run that does not exist, or of another agent, is 404 and is not touched', async () => {
      const other = await runIn('running', workflow);
      for (const runId of [other, 99_999_999, 'abc', '0', '1.5']) {
        expectError(await callback(runId, { type: 'output', complete: true }), 404, 'not_found');
        expectError(await callback(runId, { type: 'waiting', tokenId: 't', description: 'd' }), 404, 'not_found');
      }
      expect((await readRun(t, other))!.status).toBe('running');
    });

    it('a missing or wrong agent key, or an ingest key, is 401', async () => {
      const runId = await runIn('running');
      for (const headers of [{}, { authorization: 'Bearer ars_agent_nope' }, task.ingestAuth, { authorization: `Basic ${task.agentKey}` }]) {
        expectError(await callback(runId, { type: 'output', complete: true }, headers as Record<string, string>), 401, 'unauthorized');
      }
      expect((await readRun(t, runId))!.status).toBe('running');
    });
  });

  it('spec 6: a completion queues the agent\'s completed webhook action', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
    const actionId = randomUUID();
    await t.db.query(`INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc) VALUES ($1, $2, 'completed', 'https://hooks.example.test/x', $3)`, [
      actionId,
      a.agent.id,
      t.ctx.secrets.seal('whsec', sealedAt('webhook_actions', 'signing_secret_enc', actionId)),
    ]);
    const runId = await runIn('running', a);
    expectEmpty200(await callback(runId, { type: 'output', complete: true, output: { v: 1 } }, a.agentAuth));
    const { rows } = await t.db.query<{ event: string }>('SELECT event FROM outbox WHERE run_id = $1', [runId]);
    expect(rows).toEqual([{ event: 'completed' }]);
  });
});
