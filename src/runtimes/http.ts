// Outbound HTTP shared by the runtime adapters. Every call is bounded: undici's defaults (300 s headers and body,
// 10 s connect) would let one stuck runtime pin a request, a sweeper tick or a socket for minutes.
import { Agent, Pool, type Dispatcher } from 'undici';
import type { IncomingHttpHeaders } from 'node:http';
import type { Outcome, RuntimeFailure } from './runtime-adapter.ts';
import type { RuntimeCallMetrics } from '../metrics/metrics.ts';
import { RUNTIME_CALLS, type RuntimeCallName } from './runtime-calls.ts';
import { settledWithin } from '../lib/within.ts';
import { fetchWhole } from './whole-answer.ts';
import { startClientSpan } from '../tracing/spans.ts';

export interface HttpTimeouts {
  /** TCP (and TLS) connect. A runtime that cannot be reached is reported within this. */
  connectMs: number;
  /** API calls: time to the response headers. */
  headersMs: number;
  /** API calls: idle time between body chunks, and (added to headersMs) the whole-call ceiling. */
  bodyMs: number;
  /**
   * Held workflow calls and downloads wait for headers this long at most when the caller's signal never fires.
   * The caller's signal is the real bound (the wait window or the running timeout); this is a backstop equal to
   * the spec's 24 h max run duration ceiling (8.2), so a forgotten signal cannot hold a socket forever.
   */
  heldCallMaxMs: number;
  /** Downloads: idle gap tolerated between chunks. undici does not count time paused by our backpressure. */
  streamIdleMs: number;
}

export const DEFAULT_TIMEOUTS: Readonly<HttpTimeouts> = {
  connectMs: 5_000,
  headersMs: 15_000,
  bodyMs: 15_000,
  heldCallMaxMs: 24 * 60 * 60_000,
  streamIdleMs: 60_000,
};

export interface RuntimeHttpOptions {
  timeouts?: Partial<HttpTimeouts>;
  /** Largest API answer read into memory (Trigger.dev outputs, n8n execution data). */
  maxJsonBytes?: number;
  /** Tests may pass their own dispatcher; otherwise one keep-alive Agent is owned and closed by close(). */
  dispatcher?: Dispatcher;
  /** Where each call's duration and outcome is recorded (the instance's metrics). */
  metrics?: RuntimeCallMetrics;
}

export interface ApiRequest {
  method: 'GET' | 'POST';
  url: URL;
  headers?: Record<string, string>;
  /** Serialised as the JSON body when present. */
  json?: unknown;
  /**
   * Names the call in failure messages ("Trigger.dev trigger"; URLs are left out because they may be signed) and,
   * through RUNTIME_CALLS, in the metrics.
   */
  what: RuntimeCallName;
}

export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** Parsed body; undefined when the body is empty or not JSON. */
  json: unknown;
  isJson: boolean;
  /** The first 300 characters of the body, for messages. */
  snippet: string;
}

export class RuntimeHttp {
  readonly timeouts: HttpTimeouts;
  readonly maxJsonBytes: number;
  readonly dispatcher: Dispatcher;
  readonly #owned: boolean;
  readonly #pools = new Set<Pool>();
  readonly #metrics: RuntimeCallMetrics | null;

  constructor(opts: RuntimeHttpOptions = {}) {
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
    this.maxJsonBytes = opts.maxJsonBytes ?? 64 * 1024 * 1024;
    this.#owned = opts.dispatcher === undefined;
    this.#metrics = opts.metrics ?? null;
    this.dispatcher =
      opts.dispatcher ??
      new Agent({
        connect: { timeout: this.timeouts.connectMs },
        // HTTP/1.1 only, as before undici 8 (which offers h2 over TLS by default): see docs/decisions.md, issue 38.
        allowH2: false,
        headersTimeout: this.timeouts.headersMs,
        bodyTimeout: this.timeouts.bodyMs,
        // Kept so close() can cut held calls: Agent.close() forgets its pools before they have drained.
        factory: (origin, options) => {
          // The Agent drops idle pools and makes new ones later; forget the dead ones here.
          for (const p of this.#pools) if (p.closed || p.destroyed) this.#pools.delete(p);
          const pool = new Pool(origin, options);
          this.#pools.add(pool);
          return pool;
        },
      });
  }

  /**
   * Graceful: lets in-flight calls finish for up to `graceMs`, then cuts them. Shutdown should first abort the
   * signals of held workflow calls (they may otherwise last for hours).
   */
  async close(graceMs = 5_000): Promise<void> {
    if (!this.#owned) return;
    const closed = this.dispatcher.close();
    if (await settledWithin(closed, graceMs)) return;
    await Promise.all([...this.#pools].map((p) => p.destroy().catch(() => undefined)));
    await closed;
  }

  /** One API round trip, read whole (up to maxJsonBytes). Expected failures come back as values. */
  call(req: ApiRequest): Promise<Outcome<ApiResponse>> {
    return this.measured(req.what, (traceHeaders) => this.#roundTrip(req, traceHeaders));
  }

  /**
   * Records one runtime call's duration and outcome under `what`, however it was made: through `call`, or through
   * the SSRF-guarded client (a presigned output URL the runtime handed us).
   */
  async measured<T extends { status: number }>(
    what: RuntimeCallName,
    exchange: (traceHeaders: Record<string, string>) => Promise<Outcome<T>>,
  ): Promise<Outcome<T>> {
    const { runtime, operation } = RUNTIME_CALLS[what];
    // A CLIENT span while spans are recorded; its traceparent (or the caller's, passed on) goes with the call.
    const span = startClientSpan(what, { 'ars.runtime.kind': runtime, 'ars.runtime.operation': operation });
    const started = performance.now();
    const res = await exchange(span.headers);
    span.end(res.ok ? { status: res.value.status } : { error: res.failure.kind });
    if (!this.#metrics) return res;
    const outcome = !res.ok ? res.failure.kind : res.value.status >= 200 && res.value.status < 300 ? 'ok' : 'http_error';
    this.#metrics.runtimeCall(runtime, operation, outcome, (performance.now() - started) / 1000);
    return res;
  }

  async #roundTrip(req: ApiRequest, traceHeaders: Record<string, string>): Promise<Outcome<ApiResponse>> {
    const { headersMs, bodyMs } = this.timeouts;
    const headers: Record<string, string> = { accept: 'application/json', ...traceHeaders, ...req.headers };
    let body: string | undefined;
    if (req.json !== undefined) {
      body = JSON.stringify(req.json);
      headers['content-type'] = 'application/json';
    }
    try {
      const read = await fetchWhole(this.dispatcher, {
        url: req.url,
        method: req.method,
        headers,
        body,
        headersTimeout: headersMs,
        bodyTimeout: bodyMs,
        maxBytes: this.maxJsonBytes,
        deadline: Date.now() + headersMs + bodyMs,
      });
      if (read === 'too_large') return fail('bad_response', `${req.what}: answer larger than ${this.maxJsonBytes} bytes`);
      if (read === 'too_slow') return fail('timeout', `${req.what}: no complete answer within ${headersMs + bodyMs} ms`, true);
      const text = read.body.toString('utf8');
      const parsed = parseJson(text);
      return {
        ok: true,
        value: {
          status: read.status,
          headers: headerRecord(read.headers),
          json: parsed.ok ? parsed.value : undefined,
          isJson: parsed.ok,
          snippet: text.slice(0, 300),
        },
      };
    } catch (err) {
      return { ok: false, failure: transportFailure(err, req.what) };
    }
  }
}

export function fail(kind: RuntimeFailure['kind'], message: string, retryable?: boolean): { ok: false; failure: RuntimeFailure } {
  const failure: RuntimeFailure = { kind, message };
  if (retryable !== undefined) failure.retryable = retryable;
  return { ok: false, failure };
}

const UNREACHABLE = new Set([
  'ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH', 'EHOSTDOWN', 'UND_ERR_CONNECT_TIMEOUT',
]);
const CONNECTION_LOST = new Set(['UND_ERR_SOCKET', 'ECONNRESET', 'EPIPE', 'UND_ERR_CLOSED', 'UND_ERR_DESTROYED']);

/** Maps a thrown transport error to a failure. Uses error codes only: messages could echo a signed URL. */
export function transportFailure(err: unknown, what: string): RuntimeFailure {
  const code = errorCode(err);
  if (UNREACHABLE.has(code)) return { kind: 'unreachable', message: `${what}: cannot connect (${code})`, retryable: true, notSent: true };
  if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_BODY_TIMEOUT') {
    return { kind: 'timeout', message: `${what}: runtime stopped answering (${code})`, retryable: true };
  }
  if (code.startsWith('HPE_') || code === 'UND_ERR_RES_CONTENT_LENGTH_MISMATCH' || code === 'UND_ERR_HEADERS_OVERFLOW') {
    return { kind: 'bad_response', message: `${what}: answer is not valid HTTP (${code})` };
  }
  if (CONNECTION_LOST.has(code)) return { kind: 'unreachable', message: `${what}: connection lost (${code})`, retryable: true };
  return { kind: 'unreachable', message: `${what}: request failed${code ? ` (${code})` : ''}`, retryable: true };
}

function errorCode(err: unknown): string {
  let e: unknown = err;
  // undici wraps socket errors (cause) and Node wraps DNS/connect errors in AggregateError.
  for (let depth = 0; depth < 4 && e && typeof e === 'object'; depth++) {
    const { code, name } = e as { code?: unknown; name?: unknown };
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    if (name === 'HTTPParserError') return 'HPE_INVALID'; // llhttp sometimes leaves the code out
    const inner = e as { cause?: unknown; errors?: unknown[] };
    e = inner.cause ?? inner.errors?.[0];
  }
  return '';
}

export function headerRecord(raw: IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(raw)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

export function parseJson(text: string): { ok: true; value: unknown } | { ok: false } {
  if (text.trim() === '') return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return { ok: false };
  }
}

/**
 * `{base}/{segments…}` keeping any path prefix of the base URL (n8n is often served under `/n8n/`): the one way a
 * runtime URL is built from ids (decisions.md "Runtimes"). Each segment is percent-encoded, so `/`, `\`, `%`, `?`
 * and `#` in an id stay inside its segment. An empty, `.` or `..` segment cannot be encoded (URL parsers resolve
 * `%2e` as a dot too) and would change the path: null, as for a base that is not http(s).
 */
export function joinUrl(baseUrl: string, ...segments: string[]): URL | null {
  if (segments.some(isUnsafeSegment)) return null;
  const base = parsedBase(baseUrl);
  return base === null ? null : new URL(`${base}/${segments.map(encodeURIComponent).join('/')}`);
}

/** What joinUrl refuses to put in a path: nothing, or a dot segment. */
export function isUnsafeSegment(segment: string): boolean {
  return segment === '' || segment === '.' || segment === '..';
}

/** The failure message of a runtime URL joinUrl refused to build. */
export function unbuildableUrl(what: string): string {
  return `${what}: invalid base URL, or an id that is empty, "." or ".." (it would change the runtime path)`;
}

// Origin + path prefix, or null. Parsed on every call: about a microsecond, lost beside the runtime round trip.
function parsedBase(baseUrl: string): string | null {
  try {
    const url = new URL(baseUrl);
    url.search = '';
    url.hash = '';
    return url.protocol === 'http:' || url.protocol === 'https:' ? url.href.replace(/\/+$/, '') : null;
  } catch {
    return null;
  }
}

/** A short human reason from a runtime's JSON error body (`message`, `error`, `detail`), never the whole body. */
export function runtimeMessage(res: ApiResponse, fallback: string): string {
  const body = res.json as { message?: unknown; error?: unknown; detail?: unknown } | undefined;
  const candidate = body?.message ?? body?.error ?? body?.detail;
  return typeof candidate === 'string' && candidate !== '' ? candidate.slice(0, 500) : fallback;
}
