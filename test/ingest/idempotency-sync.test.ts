// Issue 13 item 4: Idempotency-Key on the synchronous starts (spec 4.2, 4.3, 7; decisions.md "Idempotency keys").
// A retry of a trigger-and-wait still running joins the wait on the same run; one that finished replays its
// answer; concurrent requests make one run. A download is streamed once: a retry after it began is 409 with the
// runId, while a JSON failure before streaming is replayed. Downloads cross real sockets (spec 4.3 streams).
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, type SeededAgent } from '../helpers/fixtures.ts';
import { N8nFake, n8nAnswers } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { expectError, runCount, taskAgent, workflowAgent } from '../sync/sync-helpers.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;
let base: string;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp();
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await t.close();
  await Promise.all([n8n.stop(), trig.stop()]);
});

function wait(a: SeededAgent, key: string, payload: object = {}) {
  return t.app.inject({
    method: 'POST',
    url: `/api/agents/${a.agent.id}/runs/trigger-and-wait`,
    headers: { ...a.ingestAuth, 'idempotency-key': key },
    payload,
  });
}

function download(a: SeededAgent, key: string) {
  return request(`${base}/api/agents/${a.agent.id}/runs/trigger-and-download`, {
    method: 'POST',
    headers: { ...a.ingestAuth, 'idempotency-key': key, 'content-type': 'application/json' },
    body: '{}',
  });
}

/** A workflow that answers only when the test says so. */
function gated(answer: object): { workflow: () => Promise<object>; release: () => void } {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  return { workflow: async () => (await gate, answer), release };
}

describe('issue 13 item 4: Idempotency-Key on /trigger-and-wait (spec 4.2)', () => {
  it('a retry while the first call still waits joins the wait on the same run: one run, one runtime call, the same answer', async () => {
    const { workflow, release } = gated({ json: { summary: 'done', outputs: 2 }, executionIdHeader: true });
    const a = await workflowAgent(t, n8n, workflow);
    const first = wait(a, 'long-one', { input: { q: 1 }, timeoutMs: 30_000 });
    await vi.waitFor(() => expect(n8n.webhookCalls(a.path)).toHaveLength(1));
    const second = wait(a, 'long-one', { input: { q: 1 }, timeoutMs: 30_000 });
    await vi.waitFor(() => expect(t.ctx.waits.size).toBe(2)); // the retry holds a wait on the same run
    release();
    const [r1, r2] = await Promise.all([first, second]);
    expect(r1.statusCode, r1.body).toBe(200);
    expect(r2.statusCode, r2.body).toBe(200);
    expect(r2.json()).toEqual(r1.json());
    expect(r2.json()).toMatchObject({ status: 'completed', output_data: { summary: 'done', outputs: 2 } });
    expect(r2.headers['idempotent-replayed']).toBe('true');
    expect(n8n.webhookCalls(a.path)).toHaveLength(1);
    expect(await runCount(t, a.agent.id)).toBe(1);
  });

  it('a retry after the answer replays it byte for byte', async () => {
    const a = await workflowAgent(t, n8n, { json: { n: 1 }, executionIdHeader: true });
    const first = await wait(a, 'done-once', { input: { q: 1 } });
    expect(first.statusCode).toBe(200);
    const again = await wait(a, 'done-once', { input: { q: 1 } });
    expect(again.statusCode).toBe(200);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(n8n.webhookCalls(a.path)).toHaveLength(1);
  });

  it('5 concurrent requests with one key make one run and one runtime call; all answer its runId', async () => {
    const a = await workflowAgent(t, n8n, { json: { ok: true }, executionIdHeader: true });
    const answers = await Promise.all(Array.from({ length: 5 }, () => wait(a, 'together', { timeoutMs: 30_000 })));
    for (const r of answers) expect(r.statusCode, r.body).toBe(200);
    expect(new Set(answers.map((r) => r.json().runId)).size).toBe(1);
    expect(n8n.webhookCalls(a.path)).toHaveLength(1);
    expect(await runCount(t, a.agent.id)).toBe(1);
  });

  it('after the first caller hung up (its answer reached nobody, so none is kept) a retry joins the run; a task run is polled to its return value', async () => {
    const a = await taskAgent(t, trig);
    const gone = new AbortController();
    const first = request(`${base}/api/agents/${a.agent.id}/runs/trigger-and-wait`, {
      method: 'POST',
      headers: { ...a.ingestAuth, 'idempotency-key': 'hung-up', 'content-type': 'application/json' },
      body: JSON.stringify({ timeoutMs: 30_000 }),
      signal: gone.signal,
    }).then(() => 'answered', () => 'hung up');
    await vi.waitFor(() => expect(t.ctx.waits.size).toBe(1));
    gone.abort();
    expect(await first).toBe('hung up');
    await vi.waitFor(() => expect(t.ctx.waits.size).toBe(0)); // its wait ended with its caller; the run goes on
    const { rows } = await t.db.query<{ run_id: number; status_code: number | null }>('SELECT run_id, status_code FROM idempotency_keys WHERE agent_id = $1', [a.agent.id]);
    expect(rows).toEqual([{ run_id: expect.any(Number), status_code: null }]);

    const retry = wait(a, 'hung-up', { timeoutMs: 30_000 });
    await vi.waitFor(() => expect(t.ctx.waits.size).toBe(1));
    const run = await readRun(t, rows[0]!.run_id);
    trig.completeRun(run!.external_run_id as string, { answer: 42, outputs: 1 }); // only the retry's polling can see it
    const res = await retry;
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ runId: rows[0]!.run_id, status: 'completed', output_data: { answer: 42, outputs: 1 }, outputs: 1 });
    expect(res.headers['idempotent-replayed']).toBe('true');
    expect(trig.triggers().filter((r) => r.path === `/api/v1/tasks/${a.task}/trigger`)).toHaveLength(1);
  });

  it('a 504 (no sign of life in the window, run failed) is the run\'s answer and is replayed', async () => {
    const a = await workflowAgent(t, n8n, n8nAnswers.never());
    const first = await wait(a, 'silent', { timeoutMs: 300 });
    expectError(first, 504, 'runtime_timeout');
    const again = await wait(a, 'silent', { timeoutMs: 300 });
    expect(again.statusCode).toBe(504);
    expect(again.body).toBe(first.body);
    expect(n8n.webhookCalls(a.path)).toHaveLength(1);
  });
});

describe('issue 13 item 4: Idempotency-Key on /trigger-and-download (spec 4.3)', () => {
  it('a retry after the file was streamed is 409 download_not_replayable with the runId; nothing starts again', async () => {
    const a = await workflowAgent(t, n8n, { binary: { contentType: 'application/pdf', size: 2000, inMemory: true } }, { output_kind: 'file_download' });
    const first = await download(a, 'file-1');
    expect(first.statusCode).toBe(200);
    expect((await first.body.arrayBuffer()).byteLength).toBe(2000);
    const runId = Number(first.headers['x-run-id']);

    const again = await download(a, 'file-1');
    expect(again.statusCode).toBe(409);
    expect(again.headers['idempotent-replayed']).toBe('true');
    const body = (await again.body.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ code: 'download_not_replayable', runId });
    expect(n8n.webhookCalls(a.path)).toHaveLength(1);
    expect(await runCount(t, a.agent.id)).toBe(1);
  });

  it('a download that failed before streaming (502: the runtime answered JSON) replays that answer', async () => {
    const a = await workflowAgent(t, n8n, { json: { message: 'no file today' } }, { output_kind: 'file_download' });
    const first = await download(a, 'file-2');
    expect(first.statusCode).toBe(502);
    const firstBody = await first.body.text();
    expect(JSON.parse(firstBody)).toMatchObject({ code: 'run_failed', runId: expect.any(Number) });
    const again = await download(a, 'file-2');
    expect(again.statusCode).toBe(502);
    expect(await again.body.text()).toBe(firstBody);
    expect(n8n.webhookCalls(a.path)).toHaveLength(1);
  });
});
