// The one outbound HTTP client for URLs a tenant or a runtime supplied (decisions.md "One way per job"): webhook
// actions use `post`, OAuth token endpoints and Trigger.dev's presigned output URLs `fetch`. Every connection goes through
// the SSRF guard (outbound-guard.ts); redirects are never followed; one timer bounds DNS, connect, headers and body;
// the bytes read from an answer are bounded. One client per service instance (ctx.outbound), closed with it.
import { Agent, fetch as undiciFetch } from 'undici';
import net from 'node:net';
import { guardedConnector, isAddressAllowed, isHostListed, parseAllowList, systemResolve, type AllowList, type Resolver } from './outbound-guard.ts';

export type OutboundFailureReason =
  | 'invalid_url'
  | 'invalid_request'
  | 'blocked_address'
  | 'redirect'
  | 'http_error'
  | 'timeout'
  | 'network_error';
export type OutboundResult =
  | { ok: true; status: number }
  | { ok: false; reason: OutboundFailureReason; retryable: boolean; status?: number; detail?: string };

export interface OutboundClient {
  post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResult>;
  /**
   * A fetch for libraries that take one (oauth4webapi): the answer is read whole, at most maxResponseBytes, into
   * a standard Response. Rejects with the network error's own code (ARS_OUTBOUND_BLOCKED, ECONNREFUSED, …), with
   * ARS_OUTBOUND_TOO_LARGE, or with the abort reason; a 3xx comes back as it is.
   */
  fetch(url: string, init?: OutboundFetchInit): Promise<Response>;
  /** The URL host itself (a name, or an IP literal in a listed range) is on ARS_OUTBOUND_ALLOW_HOSTS. */
  isAllowListed(host: string): boolean;
  /**
   * The write-time half of the guard, for a URL a tenant stores (zone_app_url, webhook action url, token_url): why
   * the guard would refuse it now — not http(s), credentials in it, an IP literal or a name resolving to an address
   * the guard refuses — or null. A name that does not resolve (yet) passes: the fetch-time check still holds.
   */
  refusalOf(url: string): Promise<string | null>;
  close(): Promise<void>;
}

export interface OutboundFetchInit {
  method?: string;
  headers?: Record<string, string>;
  body?: string | URLSearchParams | null;
  /** Ends the exchange earlier than the client's own timeout. */
  signal?: AbortSignal | null;
  /** This call's bound on DNS, connect, headers and body together, instead of the client's own timeout. */
  timeoutMs?: number;
  /** This call's ceiling on the answer's bytes, instead of the client's maxResponseBytes (a runtime's output). */
  maxResponseBytes?: number;
}

export interface OutboundClientOptions {
  /** Parsed `ARS_OUTBOUND_ALLOW_HOSTS`: exact host names, IP addresses and CIDRs exempt from the guard. */
  allowHosts: string[];
  timeoutMs?: number;
  /** Response bytes read at most: `post` abandons the rest (the status is all a delivery needs), `fetch` fails. */
  maxResponseBytes?: number;
  /** DNS resolution, replaceable in tests; defaults to dns.lookup with all: true. */
  resolve?: Resolver;
}

export class OutboundTooLargeError extends Error {
  readonly code = 'ARS_OUTBOUND_TOO_LARGE';
  constructor(maxBytes: number) {
    super(`outbound answer is larger than ${maxBytes} bytes`);
  }
}

/** Statuses whose Response must not carry a body (the Fetch standard's null body statuses). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

export function createOutboundClient(options: OutboundClientOptions): OutboundClient {
  const { timeoutMs = 15_000, maxResponseBytes = 64 * 1024, resolve = systemResolve } = options;
  const allow = parseAllowList(options.allowHosts);
  const agent = new Agent({
    connect: guardedConnector(allow, resolve, timeoutMs),
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
  });

  async function post(url: string, body: string, headers: Record<string, string>): Promise<OutboundResult> {
    const target = parseTarget(url);
    if (typeof target === 'string') return { ok: false, reason: 'invalid_url', retryable: false, detail: target };

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    try {
      const response = await agent.request({
        origin: target.origin,
        path: target.pathname + target.search,
        method: 'POST',
        headers: withDefaultContentType(headers),
        body,
        signal: controller.signal,
      });
      // The receiver has answered; a body that is huge, slow or broken does not change the outcome.
      await drain(response.body, maxResponseBytes).catch(() => undefined);
      return classifyStatus(response.statusCode);
    } catch (err) {
      return classifyError(err, controller.signal.aborted);
    } finally {
      clearTimeout(timer);
    }
  }

  async function guardedFetch(url: string, init: OutboundFetchInit = {}): Promise<Response> {
    const target = parseTarget(url);
    if (typeof target === 'string') throw new TypeError(`outbound fetch refused: ${target}`);
    const deadline = AbortSignal.timeout(init.timeoutMs ?? timeoutMs);
    const signal = init.signal ? AbortSignal.any([init.signal, deadline]) : deadline;
    try {
      const res = await undiciFetch(target, {
        method: init.method,
        headers: init.headers,
        body: init.body,
        signal,
        redirect: 'manual',
        dispatcher: agent,
      });
      const bytes = await readAtMost(res.body, init.maxResponseBytes ?? maxResponseBytes);
      const headers = new Headers([...res.headers]);
      // The body was decoded and is re-framed: the original length and encoding no longer describe it.
      headers.delete('content-length');
      headers.delete('content-encoding');
      return new Response(NULL_BODY.has(res.status) ? null : bytes, { status: res.status, statusText: res.statusText, headers });
    } catch (err) {
      // undici's fetch reports every network failure as TypeError('fetch failed'); its cause carries the code.
      const cause = (err as { cause?: unknown } | null)?.cause;
      throw err instanceof TypeError && cause instanceof Error ? cause : err;
    }
  }

  return {
    post,
    fetch: guardedFetch,
    isAllowListed: (host) => isHostListed(host, allow),
    refusalOf: (url) => refusalOf(url, allow, resolve),
    close: () => agent.close(),
  };
}

/** How long a write waits for DNS before it lets the fetch-time check decide. */
const WRITE_TIME_DNS_MS = 2_000;
const NOT_PUBLIC = 'must not reach a loopback, private, link-local or other non-public address (ARS_OUTBOUND_ALLOW_HOSTS lists exceptions)';

async function refusalOf(url: string, allow: AllowList, resolve: Resolver): Promise<string | null> {
  const target = parseTarget(url);
  if (typeof target === 'string') return target;
  const host = target.hostname.replace(/^\[(.*)\]$/, '$1');
  if (isHostListed(host, allow)) return null;
  if (net.isIP(host) !== 0) return isAddressAllowed(host, allow) ? null : NOT_PUBLIC;
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<null>((done) => (timer = setTimeout(() => done(null), WRITE_TIME_DNS_MS)));
  try {
    const addresses = await Promise.race([resolve(host, 0), gaveUp]);
    // Any refused address refuses the URL: the fetch would skip it, but a tenant pointing at one means no good.
    return addresses !== null && addresses.some((a) => !isAddressAllowed(a.address, allow)) ? NOT_PUBLIC : null;
  } catch {
    return null; // not resolvable now: the connector checks whatever it resolves to when it is fetched
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Retry policy: 5xx, 408, 425 and 429 may succeed later, as may timeouts and network failures. A 3xx (we never
 * follow redirects, so the URL is wrong), any other 4xx, a blocked address or a bad URL/request will not fix itself.
 */
function classifyStatus(status: number): OutboundResult {
  if (status >= 200 && status < 300) return { ok: true, status };
  if (status >= 300 && status < 400) return { ok: false, reason: 'redirect', retryable: false, status };
  const retryable = status >= 500 || status === 408 || status === 425 || status === 429;
  return { ok: false, reason: 'http_error', retryable, status };
}

function classifyError(err: unknown, timedOut: boolean): OutboundResult {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ARS_OUTBOUND_BLOCKED') return { ok: false, reason: 'blocked_address', retryable: false };
  // undici refuses the request itself (e.g. a header value with CR/LF): resending the same request cannot help.
  if (code === 'UND_ERR_INVALID_ARG') return { ok: false, reason: 'invalid_request', retryable: false };
  if (timedOut || code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') {
    return { ok: false, reason: 'timeout', retryable: true };
  }
  // Only the error code is surfaced: messages can echo URLs, and URLs can carry secrets.
  return { ok: false, reason: 'network_error', retryable: true, detail: typeof code === 'string' ? code : undefined };
}

// Webhook action bodies are JSON; a caller-supplied content-type (any case) wins.
function withDefaultContentType(headers: Record<string, string>): Record<string, string> {
  const hasType = Object.keys(headers).some((name) => name.toLowerCase() === 'content-type');
  return hasType ? headers : { 'content-type': 'application/json', ...headers };
}

function parseTarget(url: string): URL | string {
  let target: URL;
  try {
    target = new URL(url);
  } catch {
    return 'unparseable URL';
  }
  if (target.protocol !== 'http:' && target.protocol !== 'https:') return 'only http and https URLs are allowed';
  // Userinfo would be silently dropped by undici; refusing it makes the misconfiguration visible.
  if (target.username !== '' || target.password !== '') return 'credentials in the URL are not supported';
  return target;
}

async function drain(body: AsyncIterable<Buffer>, maxBytes: number): Promise<void> {
  let read = 0;
  for await (const chunk of body) {
    read += chunk.length;
    if (read > maxBytes) break; // leaving the loop destroys the stream and its socket
  }
}

async function readAtMost(body: AsyncIterable<Uint8Array> | null, maxBytes: number): Promise<Uint8Array<ArrayBuffer>> {
  const chunks: Uint8Array[] = [];
  let read = 0;
  for await (const chunk of body ?? []) {
    read += chunk.length;
    if (read > maxBytes) throw new OutboundTooLargeError(maxBytes); // leaving the loop cancels the stream
    chunks.push(chunk);
  }
  return new Uint8Array(Buffer.concat(chunks));
}
