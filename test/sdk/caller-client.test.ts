// Issue 13 item 2: the SDK's caller client against the real service on a real port, with the n8n and Trigger.dev
// fakes as runtimes: every call (spec 4.1-4.5), typed errors (spec part 7, decisions.md "Errors"), and retries
// that never make a second run (README "API notes": Idempotency-Key).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AgentRunClient, AgentRunError } from '../../packages/sdk/src/index.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { permissiveLimiter, runCount, taskAgent, workflowAgent } from '../sync/sync-helpers.ts';
import { scriptedFetch, startWorld, type SdkWorld } from './sdk-helpers.ts';

let w: SdkWorld;
const fastRetries = { baseDelayMs: 1, maxDelayMs: 5 };

beforeAll(async () => {
  w = await startWorld({ limiter: permissiveLimiter });
});
afterAll(async () => w.stop());

const clientFor = (a: SeededAgent, extra: Partial<ConstructorParameters<typeof AgentRunClient>[0]> = {}) =>
  new AgentRunClient({ baseUrl: w.base, ingestKey: a.ingestKey, agentId: a.agent.id, retries: fastRetries, ...extra });

describe('starting runs (spec 4.1-4.3)', () => {
  it('trigger: 201 {runId, status: queued}, sent with an Idempotency-Key', async () => {
    const a = await workflowAgent(w.t, w.n8n, { json: { ok: true }, executionIdHeader: true });
    const fetch = scriptedFetch();
    const run = await clientFor(a, { fetch }).trigger({ company: 'Initech' });
    expect(run).toEqual({ runId: expect.any(Number), status: 'queued', replayed: false });
    expect(fetch.calls[0]!.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(w.n8n.webhookCalls(a.path)[0]!.body).toMatchObject({ runId: run.runId, input: { company: 'Initech' } });
  });

  it('triggerAndWait: a run that finishes in the window is `completed` with the agent output', async () => {
    const a = await workflowAgent(w.t, w.n8n, { json: { summary: 'short', outputs: 2 }, executionIdHeader: true });
    const result = await clientFor(a).triggerAndWait({ text: 'long' });
    expect(result.kind).toBe('completed');
    if (result.kind !== 'completed') return;
    expect(result.run).toMatchObject({ status: 'completed', output_data: { summary: 'short', outputs: 2 }, outputs: 2 });
  });

  it('triggerAndWait: a window that ends first is `timed_out` with the runId, not an error (spec 8.3)', async () => {
    const a = await taskAgent(w.t, w.trig); // a task that never finishes
    const result = await clientFor(a).triggerAndWait({}, { timeoutMs: 200 });
    expect(result).toEqual({ kind: 'timed_out', runId: expect.any(Number), status: expect.stringMatching(/^(queued|running)$/), replayed: false });
  });

  it('triggerAndWait: a run that failed in the window is also an answer (200, spec 4.2): `completed` with run.status failed', async () => {
    const a = await workflowAgent(w.t, w.n8n, { status: 500, json: { message: 'Error in workflow' }, executionStatus: 'error' });
    const result = await clientFor(a).triggerAndWait({});
    expect(result).toMatchObject({ kind: 'completed', run: { status: 'failed', error: expect.any(String) } });
  });

  it('triggerAndWait: a workflow silent for the whole window (504) throws AgentRunError with code, requestId and runId', async () => {
    const a = await workflowAgent(w.t, w.n8n, { never: true });
    const err = await clientFor(a).triggerAndWait({}, { timeoutMs: 200 }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentRunError);
    expect(err).toMatchObject({ status: 504, code: 'runtime_timeout', requestId: expect.any(String), runId: expect.any(Number) });
  });

  it('triggerAndDownload: a runtime answering JSON instead of a file (502) throws with the runId', async () => {
    const a = await workflowAgent(w.t, w.n8n, { json: { not: 'a file' }, executionIdHeader: true }, { output_kind: 'file_download' });
    await expect(clientFor(a).triggerAndDownload()).rejects.toMatchObject({ status: 502, code: 'run_failed', runId: expect.any(Number) });
  });

  it('triggerAndDownload: the bytes, the filename, the content type and the run id', async () => {
    const csv = 'sku,qty\nA-1,2\n';
    const a = await workflowAgent(w.t, w.n8n, {
      text: csv, executionIdHeader: true,
      headers: { 'content-type': 'text/csv; charset=utf-8', 'content-disposition': 'attachment; filename="report.csv"' },
    }, { output_kind: 'file_download' });
    const file = await clientFor(a).triggerAndDownload({ items: 1 });
    expect(file).toMatchObject({ runId: expect.any(Number), filename: 'report.csv', contentType: 'text/csv; charset=utf-8' });
    expect(await new Response(file.body).text()).toBe(csv);
    expect(w.n8n.webhookCalls(a.path)[0]!.body).toMatchObject({ runId: file.runId });
  });
});

describe('recording runs (spec 4.4, 4.5)', () => {
  it('register: the same externalRunId answers the same run', async () => {
    const a = await taskAgent(w.t, w.trig);
    const client = clientFor(a);
    const first = await client.register('ext-1', { input: { q: 1 }, metadata: { source: 'sdk' } });
    expect(first.runId).toEqual(expect.any(Number));
    expect((await client.register('ext-1')).runId).toBe(first.runId);
  });

  it('ingest: created, then updated', async () => {
    const a = await seedAgent(w.t, { managed_by: 'standalone' });
    const client = clientFor(a);
    const created = await client.ingest('sync-1', { status: 'running' });
    expect(created).toEqual({ runId: expect.any(Number), status: 'created' });
    expect(await client.ingest('sync-1', { status: 'completed', output: { contacts: 3 }, outputs: 3 })).toEqual({ runId: created.runId, status: 'updated' });
  });
});

describe('typed errors (spec part 7)', () => {
  it('401 with code unauthorized and the request id; a 4xx is never retried', async () => {
    const a = await workflowAgent(w.t, w.n8n, { json: {} });
    const fetch = scriptedFetch();
    const err = await clientFor(a, { ingestKey: 'wrong', fetch }).trigger().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AgentRunError);
    expect(err).toMatchObject({ status: 401, code: 'unauthorized', requestId: expect.any(String) });
    expect(fetch.calls).toHaveLength(1);
  });

  it('422 validation_failed from /register, and 422 idempotency_key_reused for a key reused with another body', async () => {
    const a = await taskAgent(w.t, w.trig);
    const client = clientFor(a);
    await expect(client.register('')).rejects.toMatchObject({ status: 422, code: 'validation_failed', requestId: expect.any(String) });
    await client.trigger({ n: 1 }, { idempotencyKey: 'job-7' });
    await expect(client.trigger({ n: 2 }, { idempotencyKey: 'job-7' })).rejects.toMatchObject({ status: 422, code: 'idempotency_key_reused' });
  });
});

describe('retries: same Idempotency-Key, never a second run (issue 13 item 2)', () => {
  it('an answer lost on the network: the retry is answered from the first run (Idempotent-Replayed)', async () => {
    const a = await taskAgent(w.t, w.trig);
    const fetch = scriptedFetch(['cut-after-delivery']);
    const run = await clientFor(a, { fetch }).trigger({ n: 1 });
    expect(run.replayed).toBe(true);
    expect(fetch.calls).toHaveLength(2);
    expect(fetch.calls[1]!.headers['idempotency-key']).toBe(fetch.calls[0]!.headers['idempotency-key']);
    expect(await runCount(w.t, a.agent.id)).toBe(1);
    expect(w.trig.triggers().filter((r) => (r.body as { payload?: { runId?: number } }).payload?.runId === run.runId)).toHaveLength(1);
  });

  it('a 503 and a 429 are retried after Retry-After with the same key; one run', async () => {
    const a = await taskAgent(w.t, w.trig);
    const fetch = scriptedFetch([
      { status: 503, headers: { 'retry-after': '0' }, body: '{"error":"db","code":"service_unavailable","requestId":"r1"}' },
      { status: 429, headers: { 'retry-after': '0' }, body: '{"error":"slow","code":"rate_limited","requestId":"r2"}' },
    ]);
    const run = await clientFor(a, { fetch }).trigger();
    expect(run).toMatchObject({ status: 'queued', replayed: false });
    expect(new Set(fetch.calls.map((c) => c.headers['idempotency-key'])).size).toBe(1);
    expect(fetch.calls).toHaveLength(3);
    expect(await runCount(w.t, a.agent.id)).toBe(1);
  });

  it('retries are bounded: the last 429 is thrown with its Retry-After', async () => {
    const a = await taskAgent(w.t, w.trig);
    const limited = { status: 429, headers: { 'retry-after': '0' }, body: '{"error":"slow","code":"rate_limited","requestId":"r3"}' };
    const fetch = scriptedFetch([limited, limited, limited]);
    const err = await clientFor(a, { fetch, retries: { ...fastRetries, retries: 2 } }).trigger().catch((e: unknown) => e);
    expect(err).toMatchObject({ status: 429, code: 'rate_limited', requestId: 'r3', retryAfter: 0 });
    expect(fetch.calls).toHaveLength(3);
    expect(await runCount(w.t, a.agent.id)).toBe(0);
  });
});
