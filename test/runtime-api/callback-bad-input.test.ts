// Spec 4.8 / part 7 and decisions.md "Errors": every bad callback body gets a 4xx with a JSON error body naming the
// field, and the run is left exactly as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows, readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { bigObject, expectError, hostileBodies, permissiveLimiter, seedRun } from './support.ts';

let t: TestApp;
let a: SeededAgent;
beforeAll(async () => {
  t = await createTestApp({ limiter: permissiveLimiter });
  a = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
});
afterAll(() => t.close());

async function expectUntouched(send: (runId: number) => Promise<void>) {
  const run = await seedRun(t, a.agent.id, 'running');
  const before = await readRun(t, run.id);
  const outbox = await countRows(t, 'outbox');
  await send(run.id);
  expect(await readRun(t, run.id)).toEqual(before);
  expect(await countRows(t, 'outbox')).toBe(outbox);
}

describe('POST /api/runs/{runId}/callback with bad input', () => {
  it.each(hostileBodies({ type: 'output', complete: true }, 'output'))('%s is a 4xx with a JSON error; the run is untouched', async (_label, req) => {
    await expectUntouched(async (runId) => {
      const res = await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, ...req, headers: { ...a.agentAuth, ...req.headers } } as never);
      expectError(res, '4xx');
    });
  });

  it.each([
    ['type', { type: 'out\u0000put' }, /body\.type/],
    ['output (nested)', { type: 'output', complete: true, output: { rows: [{ name: 'ok' }, { name: 'n\u0000' }] } }, /body\.output\.rows\.1\.name .*NUL/],
    ['output (a key)', { type: 'output', output: { ['\u0000']: 1 } }, /body\.output\.\\u0000 has a key/],
    ['error.message', { type: 'output', failed: true, error: { message: 'boom\u0000' } }, /body\.error\.message .*NUL/],
    ['error.stack', { type: 'output', failed: true, error: { stack: '\u0000at x' } }, /body\.error\.stack/],
    ['tokenId', { type: 'waiting', tokenId: 'wp\u0000', description: 'd' }, /body\.tokenId .*NUL/],
    ['description', { type: 'waiting', tokenId: 'wp', description: 'Approve\u0000' }, /body\.description .*NUL/],
    ['url', { type: 'waiting', tokenId: 'wp', description: 'd', url: 'https://x.test/\u0000' }, /body\.url .*NUL/],
    ['waiting output', { type: 'waiting', tokenId: 'wp', description: 'd', output: { deep: { deeper: ['\u0000'] } } }, /body\.output\.deep\.deeper\.0/],
    ['an unknown extra field', { type: 'output', complete: true, note: 'x\u0000' }, /body\.note/],
  ])('a NUL in %s is 422 naming the field (jsonb cannot store \\u0000), not a 500', async (_label, payload, message) => {
    await expectUntouched(async (runId) => {
      const body = expectError(await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload }), 422, 'validation_failed');
      expect(body.error).toMatch(message);
    });
  });

  it('an unpaired surrogate in output is 422, not a 500', async () => {
    await expectUntouched(async (runId) => {
      const payload = { type: 'output', complete: true, output: { s: 'x\udbff' } };
      expectError(await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload }), 422, 'validation_failed');
    });
  });

  it('a 1 MiB url is 400 invalid_url', async () => {
    await expectUntouched(async (runId) => {
      const payload = { type: 'waiting', tokenId: 'wp', description: 'd', url: `https://x.test/${'a'.repeat(1024 * 1024)}` };
      expectError(await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload }), 400, 'invalid_url');
    });
  });

  it('an empty body is 400 invalid_json; no body at all is 422', async () => {
    await expectUntouched(async (runId) => {
      const url = `/api/runs/${runId}/callback`;
      expectError(await t.app.inject({ method: 'POST', url, headers: { ...a.agentAuth, 'content-type': 'application/json' }, payload: '' }), 400, 'invalid_json');
      expectError(await t.app.inject({ method: 'POST', url, headers: a.agentAuth }), 422, 'validation_failed');
    });
  });

  it('another agent\'s key on this run is 404 and writes nothing', async () => {
    const b = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
    await expectUntouched(async (runId) => {
      const res = await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: b.agentAuth, payload: { type: 'output', failed: true, error: {} } });
      expectError(res, 404, 'not_found');
    });
  });
});

describe('POST /callback body ceiling (decisions.md ARS_MAX_JSON_BODY_BYTES)', () => {
  it('answers 413 above config.maxJsonBodyBytes; the run is untouched', async () => {
    const small = await createTestApp({ config: { maxJsonBodyBytes: 4096 } });
    try {
      const agent = await seedAgent(small, { runtime: { kind: 'task', baseUrl: 'http://127.0.0.1:9' } });
      const run = await seedRun(small, agent.agent.id, 'running');
      const url = `/api/runs/${run.id}/callback`;
      const res = await small.app.inject({ method: 'POST', url, headers: agent.agentAuth, payload: { type: 'output', complete: true, output: bigObject(5000) } });
      expectError(res, 413, 'payload_too_large');
      expect((await readRun(small, run.id))!.status).toBe('running');
      const ok = await small.app.inject({ method: 'POST', url, headers: agent.agentAuth, payload: { type: 'output', complete: true, output: bigObject(3000) } });
      expect(ok.statusCode).toBe(200);
    } finally {
      await small.close();
    }
  });
});
