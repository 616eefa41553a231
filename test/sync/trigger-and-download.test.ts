// spec 4.3 over real sockets: the point of this endpoint is streaming, so bytes cross two real HTTP hops
// (n8n fake → service → client) and nothing is asserted about timing.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent } from '../helpers/fixtures.ts';
import { N8nFake, n8nAnswers, type N8nAnswer } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { callback, expectError, permissiveLimiter, platformRunId, runCount, taskAgent, waitForRun, workflowAgent } from './sync-helpers.ts';
import { cancelRun } from '../../src/runs/run-control.ts';
import type { AgentOverrides } from '../helpers/fixtures.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;
let base: string;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp({ limiter: permissiveLimiter });
  base = await t.app.listen({ port: 0, host: '127.0.0.1' });
});
afterAll(async () => {
  await n8n.stop();
  await trig.stop();
  await t.close();
});

const fileAgent = (answer: N8nAnswer | Parameters<N8nFake['registerWorkflow']>[1], o: AgentOverrides = {}) =>
  workflowAgent(t, n8n, answer, { output_kind: 'file_download', ...o });

function download(agentId: number, headers: Record<string, string>, body: unknown = {}) {
  return request(`${base}/api/agents/${agentId}/runs/trigger-and-download`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
}

async function drain(body: AsyncIterable<Buffer>): Promise<{ size: number; first: number | null }> {
  let size = 0;
  let first: number | null = null;
  for await (const chunk of body) {
    if (first === null && chunk.length > 0) first = chunk[0]!;
    size += chunk.length;
  }
  return { size, first };
}

const runIdOf = (headers: Record<string, string | string[] | undefined>) => Number(headers['x-run-id']);

describe('spec 4.3 trigger-and-download: streaming', () => {
  it('spec 4.3: 200 streams the file; Content-Type, Content-Disposition and Content-Length pass through verbatim', async () => {
    const a = await fileAgent({
      binary: { contentType: 'application/pdf', size: 300_000, inMemory: true, fillByte: 0x25 },
      headers: { 'content-disposition': 'attachment; filename="report Q3.pdf"', 'x-outputs': '3' },
      executionIdHeader: true,
    });
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.headers['content-disposition']).toBe('attachment; filename="report Q3.pdf"');
    expect(res.headers['content-length']).toBe('300000');
    expect(res.headers['cache-control']).toBe('no-store');
    const runId = runIdOf(res.headers);
    expect(runId).toBeGreaterThan(0);
    expect(await drain(res.body)).toEqual({ size: 300_000, first: 0x25 });
    const run = await waitForRun(t, runId, (r) => r.status === 'completed');
    expect(run).toMatchObject({
      source: 'download',
      outputs: 3,
      output_data: { kind: 'file_download', filename: 'report Q3.pdf', mimeType: 'application/pdf', sizeBytes: 300_000 },
    });
    expect(run.started_at).not.toBeNull();
    expect(run.completed_at).not.toBeNull();
    expect(run.duration_ms).toEqual(expect.any(Number));
    expect(run.external_run_id).toEqual(expect.any(String));
  });

  it('spec 4.3: without a runtime Content-Length the answer is chunked; a missing Content-Disposition is derived', async () => {
    const a = await fileAgent({ binary: { contentType: 'text/csv; charset=utf-8', size: 70_000 } });
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    const runId = runIdOf(res.headers);
    expect(res.headers['content-length']).toBeUndefined();
    expect(res.headers['transfer-encoding']).toBe('chunked');
    expect(res.headers['content-type']).toBe('text/csv; charset=utf-8');
    expect(res.headers['content-disposition']).toBe(`attachment; filename="run-${runId}.csv"`);
    expect((await drain(res.body)).size).toBe(70_000);
    const run = await waitForRun(t, runId, (r) => r.status === 'completed');
    expect(run.output_data).toEqual({ kind: 'file_download', filename: `run-${runId}.csv`, mimeType: 'text/csv', sizeBytes: 70_000 });
    expect(run.outputs).toBe(0);
  });

  it('spec 4.3: RFC 6266 filename* wins for the stored file name; an invalid X-Outputs is dropped silently', async () => {
    const disposition = "attachment; filename=\"fallback.xlsx\"; filename*=UTF-8''Bericht%20%E2%82%AC%20..%2F..%2Fetc.xlsx";
    for (const outputs of ['-1', 'abc', '1.5']) {
      const a = await fileAgent({ binary: { contentType: 'application/vnd.ms-excel', size: 10 }, headers: { 'content-disposition': disposition, 'x-outputs': outputs } });
      const res = await download(a.agent.id, a.ingestAuth);
      expect(res.headers['content-disposition']).toBe(disposition);
      await drain(res.body);
      const run = await waitForRun(t, runIdOf(res.headers), (r) => r.status === 'completed');
      expect(run.outputs).toBe(0);
      expect((run.output_data as { filename: string }).filename).toBe('etc.xlsx');
    }
  });

  it('spec 4.3 / 8.4: a 256 MiB file streams through with bounded memory (never buffered)', async () => {
    const size = 256 * 1024 * 1024;
    const a = await fileAgent({ binary: { contentType: 'application/octet-stream', size, chunkSize: 256 * 1024, fillByte: 0x5a } });
    global.gc?.();
    const rssBefore = process.memoryUsage().rss;
    let rssMax = rssBefore;
    const sampler = setInterval(() => (rssMax = Math.max(rssMax, process.memoryUsage().rss)), 50);
    try {
      const res = await download(a.agent.id, a.ingestAuth, { timeoutMs: 30_000 });
      expect(res.statusCode).toBe(200);
      expect(await drain(res.body)).toEqual({ size, first: 0x5a });
      const run = await waitForRun(t, runIdOf(res.headers), (r) => r.status === 'completed');
      expect((run.output_data as { sizeBytes: number }).sizeBytes).toBe(size);
    } finally {
      clearInterval(sampler);
    }
    // Everything (fake runtime, service and client) is this one process: a buffered file would add >= 256 MiB.
    // Below that, the bound only has to hold the stream's buffers and a collector that runs late: Node 24 on a
    // loaded CI machine grew 125 MiB here (gc() is not exposed), Node 20 well under 96.
    expect(rssMax - rssBefore).toBeLessThan(192 * 1024 * 1024);
  }, 120_000);

  it('spec 4.3: a client that aborts mid-stream fails the run with a clear reason and aborts the runtime call', async () => {
    const a = await fileAgent({ binary: { contentType: 'application/zip', size: 64 * 1024 * 1024 } });
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    const runId = runIdOf(res.headers);
    const iterator = res.body[Symbol.asyncIterator]();
    await iterator.next();
    res.body.destroy();
    const run = await waitForRun(t, runId, (r) => r.status === 'failed');
    expect(run.error).toMatch(/^client disconnected during download after \d+ bytes$/);
    const ex = [...n8n.executions.values()].find((e) => e.workflowPath === (a as { path: string }).path)!;
    await vi.waitFor(() => expect(ex.clientGone).toBe(true));
    expect(ex.bytesSent).toBeLessThan(64 * 1024 * 1024);
  });

  it('spec 4.3: a runtime that breaks off mid-stream fails the run; the caller sees a cut response, not success', async () => {
    const dying = await new N8nFake().start();
    const a = await workflowAgent(t, dying, { binary: { contentType: 'application/zip', size: 64 * 1024 * 1024 } }, { output_kind: 'file_download' });
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    const runId = runIdOf(res.headers);
    await vi.waitFor(() => expect([...dying.executions.values()][0]?.bytesSent).toBeGreaterThan(0));
    await dying.stop(); // every socket of the runtime dies
    await expect(drain(res.body)).rejects.toThrow();
    const run = await waitForRun(t, runId, (r) => r.status === 'failed');
    expect(run.error).toMatch(/^the runtime broke off the download after \d+ bytes$/);
  });
  it('spec 4.3 / issue 11: a run write that fails once the file has started (database down) is a 503 that leaves nothing open', async () => {
    const a = await fileAgent({ binary: { contentType: 'application/zip', size: 8 * 1024 * 1024 } });
    const real = t.ctx.db.query.bind(t.ctx.db);
    // The `started` write (queued → running on the first byte) fails, as it would with the database gone.
    const spy = vi.spyOn(t.ctx.db, 'query').mockImplementation(((sql: string, params?: readonly unknown[]) =>
      sql.startsWith('WITH moved AS (UPDATE runs') && params?.[2] === 'running'
        ? Promise.reject(Object.assign(new Error('connection terminated'), { code: '57P01' }))
        : real(sql, params)) as typeof t.ctx.db.query);
    let res;
    try {
      res = await download(a.agent.id, a.ingestAuth);
    } finally {
      spy.mockRestore();
    }
    expect(res.statusCode).toBe(503);
    expect(res.headers['retry-after']).toBe('5');
    await res.body.dump();
    const ex = [...n8n.executions.values()].find((e) => e.workflowPath === a.path)!;
    await vi.waitFor(() => expect(ex.clientGone).toBe(true)); // the runtime's answer was closed, not left streaming
    expect(ex.bytesSent).toBeLessThan(8 * 1024 * 1024);
    expect(t.ctx.runWatch.watchedRuns).toBe(0); // no listener left behind
  });

  it('spec 4.3: a download whose execution id another run already holds still streams and completes, without that id', async () => {
    const a = await fileAgent({ binary: { contentType: 'text/plain', size: 64 }, headers: { 'x-n8n-execution-id': 'download-id' } });
    const first = await download(a.agent.id, a.ingestAuth);
    await drain(first.body);
    await waitForRun(t, runIdOf(first.headers), (r) => r.status === 'completed');
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    expect((await drain(res.body)).size).toBe(64);
    const run = await waitForRun(t, runIdOf(res.headers), (r) => r.status === 'completed');
    expect(run.external_run_id).toBeNull();
  });
});

describe('spec 4.3 trigger-and-download: the run ending elsewhere', () => {
  it('decisions.md cancel: an admin cancel mid-stream cuts the transfer and the run stays cancelled', async () => {
    const a = await fileAgent({ binary: { contentType: 'application/zip', size: 64 * 1024 * 1024 } });
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    const runId = runIdOf(res.headers);
    const cancelled = await cancelRun(t.ctx, runId, { via: 'admin' });
    expect(cancelled.kind).toBe('cancelled');
    await expect(drain(res.body)).rejects.toThrow();
    const ex = [...n8n.executions.values()].find((e) => e.workflowPath === a.path)!;
    await vi.waitFor(() => expect(ex.clientGone).toBe(true));
    expect(await readRun(t, runId)).toMatchObject({ status: 'cancelled', error: 'Run cancelled by a platform admin' });
  });

  it('spec part 1: a callback that completes the run before the file streams does not cost the caller the file', async () => {
    const a = await fileAgent(async (ctx) => {
      await callback(t.app, a, platformRunId(ctx.body), { type: 'output', output: { reported: true }, complete: true });
      return { binary: { contentType: 'text/plain', size: 1000 } };
    });
    const res = await download(a.agent.id, a.ingestAuth);
    expect(res.statusCode).toBe(200);
    expect((await drain(res.body)).size).toBe(1000);
    // First terminal write wins: the callback's completion stands.
    expect(await readRun(t, runIdOf(res.headers))).toMatchObject({ status: 'completed', output_data: { reported: true } });
  });
});

describe('spec 4.3 trigger-and-download: failures', () => {
  it('spec 4.3 / part 7: the runtime answering JSON is 502 {error, runId} and the run failed', async () => {
    const cases: N8nAnswer[] = [n8nAnswers.errorInWorkflow(), { json: { not: 'a file' } }, n8nAnswers.emptyOk(), { status: 404, json: { message: 'nope' } }];
    for (const answer of cases) {
      const a = await fileAgent(answer);
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, headers: a.ingestAuth, payload: {} });
      const body = expectError(res, 502, 'run_failed');
      expect(body.runId).toEqual(expect.any(Number));
      const run = await readRun(t, body.runId as number);
      expect(run).toMatchObject({ status: 'failed', output_data: null });
      expect(run!.error).toEqual(expect.stringMatching(/instead of a file/));
    }
  });

  it('spec 4.3: nothing streaming within the window is 504, the run failed and the runtime call aborted', async () => {
    const a = await fileAgent(n8nAnswers.never());
    const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, headers: a.ingestAuth, payload: { timeoutMs: 300 } });
    const body = expectError(res, 504, 'runtime_timeout');
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'failed', error: 'the runtime did not begin streaming within the wait window' });
    const ex = [...n8n.executions.values()].find((e) => e.workflowPath === a.path)!;
    await vi.waitFor(() => expect(ex.clientGone).toBe(true));
  });

  it('spec part 7: runtime invocation failing before streaming began is 500 runtime_failed', async () => {
    const a = await seedAgent(t, { runtime: { kind: 'workflow', baseUrl: await unusedUrl() }, output_kind: 'file_download' });
    const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, headers: a.ingestAuth, payload: {} });
    const body = expectError(res, 500, 'runtime_failed');
    expect(await readRun(t, body.runId as number)).toMatchObject({ status: 'failed' });
  });

  it('spec part 7: 403 with external triggers off; 422 not platform, not file_download, not active, task runtime', async () => {
    const off = await fileAgent({ json: {} }, { allow_external_triggers: false });
    expectError(await t.app.inject({ method: 'POST', url: `/api/agents/${off.agent.id}/runs/trigger-and-download`, headers: off.ingestAuth, payload: {} }), 403, 'not_eligible');
    const unavailable = [
      await fileAgent({ json: {} }, { managed_by: 'standalone' }),
      await fileAgent({ json: {} }, { output_kind: 'json' }),
      await fileAgent({ json: {} }, { status: 'paused' }),
      await taskAgent(t, trig, undefined, { output_kind: 'file_download' }),
    ];
    for (const a of [off, ...unavailable]) {
      if (a !== off) {
        const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, headers: a.ingestAuth, payload: {} });
        expectError(res, 422, 'agent_unavailable');
      }
      expect(await runCount(t, a.agent.id)).toBe(0);
    }
    expect(trig.triggers()).toHaveLength(0);
  });

  it('spec part 7: an invalid body is 400 naming the field; nothing is written', async () => {
    const a = await fileAgent({ json: {} });
    for (const payload of [{ timeoutMs: 0 }, { timeoutMs: -5 }, { timeoutMs: 2.5 }, { timeoutMs: '10' }, { input: 'text' }]) {
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, headers: a.ingestAuth, payload });
      const body = expectError(res, 400, 'invalid_body');
      expect(body.error).toMatch(/body\.(timeoutMs|input)/);
    }
    expect(await runCount(t, a.agent.id)).toBe(0);
  });

  it('spec part 7: 401 without the ingest key', async () => {
    const a = await fileAgent({ json: {} });
    expectError(await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-download`, payload: {} }), 401, 'unauthorized');
    expect(await runCount(t, a.agent.id)).toBe(0);
  });
});
