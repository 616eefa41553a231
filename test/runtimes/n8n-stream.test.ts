// invokeStream over real sockets: the file is never buffered, headers pass through as n8n sent them, and the
// caller's signal bounds only the start of the answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Readable } from 'node:stream';
import { N8nAdapter } from '../../src/runtimes/n8n-adapter.ts';
import { RuntimeHttp } from '../../src/runtimes/http.ts';
import type { Outcome, RuntimeConnection, StreamStart } from '../../src/runtimes/runtime-adapter.ts';
import { N8nFake, n8nAnswers } from '../fakes/n8n-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';

const MiB = 1024 * 1024;
const fake = new N8nFake();
const http = new RuntimeHttp({ timeouts: { connectMs: 500, headersMs: 300, bodyMs: 300 } });
const adapter = new N8nAdapter({ http });
let runtime: RuntimeConnection;

function ok<T>(o: Outcome<T>): T {
  if (!o.ok) throw new Error(`expected ok, got ${JSON.stringify(o.failure)}`);
  return o.value;
}

async function start(path: string, signal?: AbortSignal): Promise<StreamStart> {
  return ok(await adapter.invokeStream({ runtime, target: path, payload: { runId: 7, input: {} }, signal }));
}

async function drain(body: Readable): Promise<number> {
  let n = 0;
  for await (const chunk of body) n += (chunk as Buffer).length;
  return n;
}

beforeAll(async () => {
  await fake.start();
  runtime = { id: 3, kind: 'workflow', baseUrl: fake.url, apiKey: fake.apiKey };
});
afterAll(async () => {
  await fake.stop();
  await http.close();
});

describe('n8n adapter: invokeStream', () => {
  it('streams 256 MiB with backpressure and without buffering', async () => {
    const size = 256 * MiB;
    fake.registerWorkflow('big', { binary: { contentType: 'application/zip', size }, executionIdHeader: true });
    const s = await start('big');
    expect(s).toMatchObject({ status: 200, isJson: false });
    expect(s.headers['content-type']).toBe('application/zip');
    expect(s.headers['content-length']).toBeUndefined(); // not in memory at n8n: chunked (⚠)
    expect(s.headers['content-disposition']).toBeUndefined(); // passed on as missing; the route derives one (⚠)
    expect(s.headers['content-security-policy']).toMatch(/^sandbox/);
    expect(s.externalRunId).toMatch(/^\d+$/);
    const ex = fake.execution(s.externalRunId!);
    // Nobody reads: n8n must be held back by TCP flow control, not pour 256 MiB into our memory.
    await new Promise((r) => setTimeout(r, 400));
    expect(ex.bytesSent).toBeLessThan(32 * MiB);
    const rssBefore = process.memoryUsage().rss;
    // While draining, what n8n has sent and we have not yet read (socket buffers plus our stream's queue) stays
    // bounded: the adapter never reads ahead of its reader.
    let read = 0;
    let aheadMax = 0;
    for await (const chunk of s.body) {
      read += (chunk as Buffer).length;
      aheadMax = Math.max(aheadMax, ex.bytesSent - read);
    }
    expect(read).toBe(size);
    expect(aheadMax).toBeLessThan(32 * MiB);
    // Coarse, and only a backstop: holding the stream would take at least its 256 MiB. RSS kept by the allocator
    // while draining varies by Node version (Node 24: 97 and 130 MiB seen, Node 20 less), so it is no finer bound.
    expect(process.memoryUsage().rss - rssBefore).toBeLessThan(size);
  });

  it('passes content-length and content-disposition through when n8n sends them', async () => {
    fake.registerWorkflow('small', {
      binary: { contentType: 'text/csv', size: 1000, inMemory: true },
      headers: { 'content-disposition': 'attachment; filename="report.csv"' },
    });
    const s = await start('small');
    expect(s.headers['content-length']).toBe('1000');
    expect(s.headers['content-disposition']).toBe('attachment; filename="report.csv"');
    expect(s.externalRunId).toBeNull();
    expect(await drain(s.body)).toBe(1000);
  });

  it.each([
    ['a JSON answer', { json: { error: 'no file' } }],
    ['an empty 200', n8nAnswers.emptyOk()],
    ['a 500', n8nAnswers.errorInWorkflow()],
  ])('flags %s as JSON (spec 4.3: 502)', async (_name, answer) => {
    fake.registerWorkflow('notfile', answer);
    const s = await start('notfile');
    expect(s.isJson).toBe(true);
    await drain(s.body);
  });

  it('keeps streaming when the caller\'s signal fires after the answer began', async () => {
    fake.registerWorkflow('mid', { binary: { contentType: 'application/octet-stream', size: 8 * MiB } });
    const ac = new AbortController();
    const s = await start('mid', ac.signal);
    ac.abort();
    expect(await drain(s.body)).toBe(8 * MiB);
  });

  it('is bounded by the caller\'s signal, not by API timeouts, while n8n has not answered', async () => {
    fake.registerWorkflow('slow', { json: {}, delayMs: 700 }); // beyond every API timeout above
    expect((await start('slow')).isJson).toBe(true);
    fake.registerWorkflow('stuck', n8nAnswers.never());
    const t0 = Date.now();
    const o = await adapter.invokeStream({ runtime, target: 'stuck', payload: { runId: 8, input: {} }, signal: AbortSignal.timeout(300) });
    expect(o.ok ? null : o.failure.kind).toBe('timeout');
    expect(Date.now() - t0).toBeLessThan(1500);
  });

  it('reports an unreachable runtime', async () => {
    const o = await adapter.invokeStream({ runtime: { ...runtime, baseUrl: await unusedUrl() }, target: 'x', payload: { runId: 9, input: {} } });
    expect(o.ok ? null : o.failure.kind).toBe('unreachable');
  });
});
