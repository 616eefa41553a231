// The one place requests leave the SDK: JSON in, status checked, and the retries that are safe. A request is retried
// only when the service did nothing with it or will answer the repeat as the same request: a network failure, a
// 429 (nothing started) and a 503 (the database was away). Starts carry an Idempotency-Key and register/ingest an
// externalRunId, so even a retry of a request that did reach the service makes no second run.
import { AgentRunError, errorFromResponse, retryAfterSeconds } from './errors.ts';

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface RetryOptions {
  /** Retries after the first attempt (default 3; 0 turns retrying off). */
  retries?: number;
  /** First backoff; it doubles per attempt, with jitter (default 500 ms). */
  baseDelayMs?: number;
  /** No single wait is longer, whatever Retry-After says (default 30 s). */
  maxDelayMs?: number;
}

export interface Transport {
  fetch: FetchLike;
  retry: Required<RetryOptions>;
}

export function transport(fetchFn: FetchLike | undefined, retry: RetryOptions | undefined): Transport {
  return {
    fetch: fetchFn ?? ((input, init) => globalThis.fetch(input, init)),
    retry: { retries: retry?.retries ?? 3, baseDelayMs: retry?.baseDelayMs ?? 500, maxDelayMs: retry?.maxDelayMs ?? 30_000 },
  };
}

export interface SendOptions {
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: unknown;
  signal?: AbortSignal;
}

/** Sends the request, retrying what is safe; resolves with a 2xx Response (body unread) or throws AgentRunError. */
export async function send(t: Transport, url: string, opts: SendOptions): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...opts.headers };
  const init: RequestInit = { method: opts.method, headers, signal: opts.signal };
  if (opts.body !== undefined) {
    init.body = JSON.stringify(opts.body);
    headers['content-type'] = 'application/json';
  }
  for (let attempt = 0; ; attempt++) {
    let res: Response;
    try {
      res = await t.fetch(url, init);
    } catch (err) {
      // An abort is the caller's decision, never retried.
      if (opts.signal?.aborted || attempt >= t.retry.retries) throw err;
      await sleep(backoff(t, attempt, undefined), opts.signal);
      continue;
    }
    if (res.ok) return res;
    if ((res.status === 429 || res.status === 503) && attempt < t.retry.retries) {
      await res.body?.cancel().catch(() => undefined);
      await sleep(backoff(t, attempt, retryAfterSeconds(res)), opts.signal);
      continue;
    }
    throw await errorFromResponse(res);
  }
}

/** Reads a 2xx JSON answer; an answer that is not JSON is the service's surprise, reported as one. */
export async function readJson<T>(res: Response): Promise<T> {
  const text = await res.text();
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new AgentRunError(`expected JSON, got: ${text.slice(0, 200)}`, res.status, 'unexpected_response', res.headers.get('x-request-id') ?? undefined);
  }
}

function backoff(t: Transport, attempt: number, retryAfter: number | undefined): number {
  const exponential = t.retry.baseDelayMs * 2 ** attempt * (0.8 + Math.random() * 0.4);
  const wait = retryAfter === undefined ? exponential : retryAfter * 1000;
  return Math.min(wait, t.retry.maxDelayMs);
}

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });
}
