// The first moments of a streamed runtime answer (spec 4.3): waiting for its first byte without consuming it,
// and reading a short reason out of an answer that is not a file.
import type { Readable } from 'node:stream';
import type { StreamStart } from '../runtimes/runtime-adapter.ts';
import { parseJson } from '../runtimes/http.ts';

export type FirstChunk = { kind: 'chunk' } | { kind: 'end' } | { kind: 'error' } | { kind: 'aborted' };

/** Resolves once `body` has a byte (left in the stream for whoever reads next), ends empty, fails or `signal` fires. */
export function firstChunk(body: Readable, signal: AbortSignal): Promise<FirstChunk> {
  if (signal.aborted) return Promise.resolve({ kind: 'aborted' });
  return new Promise((resolve) => {
    const settle = (result: FirstChunk): void => {
      body.off('readable', onReadable);
      body.off('end', onEnd);
      body.off('error', onError);
      body.off('close', onClose);
      signal.removeEventListener('abort', onAbort);
      resolve(result);
    };
    const onReadable = (): void => {
      const chunk = body.read() as Buffer | null;
      if (chunk === null || chunk.length === 0) return; // 'end' follows when there is nothing at all
      body.unshift(chunk);
      settle({ kind: 'chunk' });
    };
    const onEnd = (): void => settle({ kind: 'end' });
    const onError = (): void => settle({ kind: 'error' });
    const onClose = (): void => settle(body.readableEnded ? { kind: 'end' } : { kind: 'error' });
    const onAbort = (): void => settle({ kind: 'aborted' });
    body.on('readable', onReadable);
    body.once('end', onEnd);
    body.once('error', onError);
    body.once('close', onClose);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

const MAX_REASON_BYTES = 16 * 1024;

/**
 * spec 4.3's 502: why the answer is not a file, with the runtime's own `message` when its JSON has one. Reads at
 * most 16 KiB for at most `maxMs`, then leaves the rest (the caller destroys the body).
 */
export async function jsonReason(start: StreamStart, maxMs: number): Promise<string> {
  const what = start.status < 200 || start.status >= 300
    ? `the runtime answered HTTP ${start.status} instead of a file`
    : start.isJson && start.headers['content-length'] !== '0'
      ? 'the runtime answered JSON instead of a file'
      : 'the runtime answered an empty body instead of a file';
  const text = await readSome(start.body, MAX_REASON_BYTES, maxMs);
  const parsed = parseJson(text);
  const message = parsed.ok ? (parsed.value as { message?: unknown } | null)?.message : undefined;
  return typeof message === 'string' && message !== '' ? `${what}: ${message.slice(0, 300)}` : what;
}

function readSome(body: Readable, maxBytes: number, maxMs: number): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const done = (): void => {
      clearTimeout(timer);
      body.off('data', onData);
      body.off('end', done);
      body.off('error', done);
      body.off('close', done);
      body.pause();
      resolve(Buffer.concat(chunks).toString('utf8'));
    };
    const onData = (chunk: Buffer): void => {
      chunks.push(chunk);
      size += chunk.length;
      if (size >= maxBytes) done();
    };
    const timer = setTimeout(done, maxMs);
    body.on('data', onData);
    body.once('end', done);
    body.once('error', done);
    body.once('close', done);
  });
}
