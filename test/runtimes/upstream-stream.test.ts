// The download's upstream body (runtimes/upstream-stream.ts): read as a Readable first (the first-byte wait), then
// piped, every byte arrives once and in order; the destination's backpressure pauses the runtime; destroying the
// body closes the runtime's answer.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { Agent } from 'undici';
import { openStream, type StreamedAnswer } from '../../src/runtimes/upstream-stream.ts';
import { firstChunk } from '../../src/sync/stream-start.ts';

const KiB = 1024;
const dispatcher = new Agent();
let server: Server;
let origin: string;
const closedEarly: string[] = [];

/** Bytes 0..size-1 of a pattern no shifted or repeated chunk reproduces. */
function pattern(size: number, from = 0): Buffer {
  const b = Buffer.allocUnsafe(size);
  for (let i = 0; i < size; i++) b[i] = ((from + i) * 7 + ((from + i) >> 10)) & 0xff;
  return b;
}
const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

/** Writes `size` bytes in `chunk`-sized writes, honouring its own backpressure. */
async function serve(res: ServerResponse, size: number, chunk: number): Promise<void> {
  res.writeHead(200, { 'content-type': 'application/octet-stream' });
  for (let sent = 0; sent < size && !res.destroyed; sent += chunk) {
    if (res.write(pattern(Math.min(chunk, size - sent), sent))) continue;
    await new Promise<void>((resolve) => {
      const go = (): void => {
        res.off('drain', go).off('close', go);
        resolve();
      };
      res.on('drain', go).on('close', go);
    });
  }
  res.end();
}

beforeAll(async () => {
  server = createServer((req, res) => {
    const url = new URL(req.url!, 'http://x');
    const size = Number(url.searchParams.get('size'));
    res.once('close', () => {
      if (!res.writableFinished) closedEarly.push(url.pathname);
    });
    req.resume();
    req.once('end', () => {
      if (url.pathname === '/never') return; // headers never come
      void serve(res, size, 16 * KiB);
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  await new Promise((r) => server.close(r));
});

function open(path: string, signal?: AbortSignal): Promise<StreamedAnswer> {
  return openStream(dispatcher, { url: new URL(path, origin), method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}', signal, headersTimeout: 5_000, bodyTimeout: 5_000 });
}

/** A destination that takes `perTick` bytes at a time with a small buffer: it pushes back often. */
function slowSink(): { sink: Writable; bytes: () => Buffer; finished: Promise<void> } {
  const parts: Buffer[] = [];
  const sink = new Writable({
    highWaterMark: 8 * KiB,
    write(chunk: Buffer, _enc, done) {
      parts.push(chunk);
      setImmediate(done);
    },
  });
  const finished = new Promise<void>((resolve, reject) => sink.once('finish', resolve).once('error', reject));
  return { sink, bytes: () => Buffer.concat(parts), finished };
}

describe('upstream body (dispatch straight into the destination)', () => {
  it('read first as a Readable, then piped: every byte once and in order, with backpressure both ways', async () => {
    const size = 4 * 1024 * KiB;
    const s = await open(`/file?size=${size}`);
    expect(s.status).toBe(200);
    expect(await firstChunk(s.body, new AbortController().signal)).toEqual({ kind: 'chunk' });
    // Nobody reads for a while: the body's buffer fills and the runtime is paused, far from the whole file.
    await new Promise((r) => setTimeout(r, 100));
    expect(s.body.received).toBeLessThan(size);
    const { sink, bytes, finished } = slowSink();
    s.body.pipe(sink);
    await finished;
    expect(bytes().length).toBe(size);
    expect(sha(bytes())).toBe(sha(pattern(size)));
    expect(s.body.received).toBe(size);
    expect(s.body.errored).toBeNull();
  });

  it('piped after the runtime already finished: the buffered bytes, then the end', async () => {
    const s = await open('/small?size=5000');
    await new Promise((r) => setTimeout(r, 100));
    expect(s.body.received).toBe(5000);
    const { sink, bytes, finished } = slowSink();
    s.body.pipe(sink);
    await finished;
    expect(sha(bytes())).toBe(sha(pattern(5000)));
  });

  it('destroying the body mid-stream closes the runtime\'s answer', async () => {
    const s = await open(`/cut?size=${64 * 1024 * KiB}`);
    const { sink } = slowSink();
    s.body.pipe(sink);
    await new Promise((r) => setTimeout(r, 50));
    s.body.destroy();
    await expect.poll(() => closedEarly.includes('/cut')).toBe(true);
  });

  it('the signal bounds only the wait for the answer to begin', async () => {
    const ac = new AbortController();
    const pending = open('/never', ac.signal);
    setTimeout(() => ac.abort(new Error('window over')), 50);
    await expect(pending).rejects.toThrow('window over');
    await expect.poll(() => closedEarly.includes('/never')).toBe(true);
  });
});
