// The zone proxy's upstream HTTP client (zones.md): where a proxied request lands on the agent's zone app, and one
// bounded exchange with it. Bodies stream in both directions; nothing is buffered here.
// zone_app_url is set by a tenant's admin (issue 35), so every connection goes through the same SSRF guard as the
// outbound client (lib/outbound-guard.ts: checked on the addresses the socket uses, so DNS rebinding cannot reach an
// internal address), with the same allow-list, ARS_OUTBOUND_ALLOW_HOSTS; an answer is cut past maxResponseBytes.
import { Transform, type Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';
import { ApiError } from '../errors.ts';
import { guardedConnector, parseAllowList, systemResolve, type Resolver } from '../lib/outbound-guard.ts';

export interface ZoneRequest {
  method: string;
  headers: Record<string, string | string[]>;
  /** The inbound request stream, piped on as it arrives; null when there is no body. */
  body: Readable | null;
  signal: AbortSignal;
}

export type ZoneExchange =
  | { ok: true; response: ZoneAnswer }
  | { ok: false; reason: 'timeout' | 'unreachable' | 'blocked' | 'too_large'; code: string | undefined };

/** The zone app's status and headers, and its body as it streams (cut past the cap). */
export interface ZoneAnswer {
  statusCode: number;
  headers: Dispatcher.ResponseData['headers'];
  body: Readable;
}

export interface ZoneProxyClient {
  send(target: URL, request: ZoneRequest): Promise<ZoneExchange>;
  /** Cuts open exchanges too: at shutdown a held zone-app stream is not worth waiting for. */
  close(): Promise<void>;
}

export interface ZoneProxyClientOptions {
  /** ARS_OUTBOUND_ALLOW_HOSTS: the hosts, IPs and CIDRs a zone app may live on although they are not public. */
  allowHosts: string[];
  /** ARS_ZONE_MAX_RESPONSE_BYTES: an answer announcing more is refused (502), one streaming past it is cut. */
  maxResponseBytes: number;
  /** DNS, replaceable in tests. */
  resolve?: Resolver;
}

const CONNECT_TIMEOUT_MS = 10_000;

/**
 * Bounded upstream timeouts: 10 s to connect, 30 s for the zone app to start answering, 60 s of silence within a
 * body (either direction) before the exchange is cut.
 */
export function createZoneProxyClient(opts: ZoneProxyClientOptions): ZoneProxyClient {
  const connect = guardedConnector(parseAllowList(opts.allowHosts), opts.resolve ?? systemResolve, CONNECT_TIMEOUT_MS);
  const dispatcher = new Agent({ connect, headersTimeout: 30_000, bodyTimeout: 60_000 });
  return {
    async send(target, request) {
      try {
        const response = await dispatcher.request({
          origin: target.origin,
          path: target.pathname + target.search,
          method: request.method as Dispatcher.HttpMethod,
          headers: request.headers,
          body: request.body,
          signal: request.signal,
        });
        if (Number(response.headers['content-length'] ?? 0) > opts.maxResponseBytes) {
          response.body.on('error', () => undefined).destroy(); // undici destroys it with an AbortError nobody needs
          return { ok: false, reason: 'too_large', code: undefined };
        }
        return { ok: true, response: { statusCode: response.statusCode, headers: response.headers, body: capped(response.body, opts.maxResponseBytes) } };
      } catch (err) {
        const raw = (err as { code?: unknown }).code;
        const code = typeof raw === 'string' ? raw : undefined;
        if (code === 'ARS_OUTBOUND_BLOCKED') return { ok: false, reason: 'blocked', code };
        const timedOut = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
        return { ok: false, reason: timedOut ? 'timeout' : 'unreachable', code };
      }
    },
    close: () => dispatcher.destroy(),
  };
}

/** The answer's body, passed on as it arrives until it exceeds maxBytes; then the stream fails (the reply is cut). */
function capped(body: Readable, maxBytes: number): Readable {
  let seen = 0;
  const limit = new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      // An ApiError: if nothing was sent yet, the caller gets a 502 saying why; otherwise the reply is cut.
      if (seen > maxBytes) done(new ApiError('upstream_failed', 'the zone app’s answer is larger than ARS_ZONE_MAX_RESPONSE_BYTES'));
      else done(null, chunk);
    },
  });
  body.on('error', (err) => limit.destroy(err));
  limit.on('close', () => body.destroy());
  return body.pipe(limit);
}

/**
 * `{zone_app_url}/{path*}` with the query kept (the path forwarded as the client sent it); null when the path could
 * reach anything outside zone_app_url. A zone app, or a server in front of it, may decode the path once more, or
 * treat `\` as `/`, or `;…` as a parameter: so a dot segment spelt with percent-encoded dots, slashes or backslashes
 * (`%2e`, `%2f`, `%5c`, also double-encoded as `%25…`), with backslashes or with `;` parameters is refused too
 * (issue 12). Whatever the URL parser then makes of the path, the result must still lie under zone_app_url.
 */
export function upstreamUrl(zoneAppUrl: string, rest: string): URL | null {
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q);
  // `/zones/1/appx` matched the route's prefix but names no path under the app: it would become `{base}x`.
  if (path !== '' && !path.startsWith('/')) return null;
  if (hasDotSegment(path)) return null;
  const base = new URL(zoneAppUrl);
  const prefix = base.pathname.replace(/\/+$/, '');
  const url = new URL(base.origin);
  url.pathname = prefix + (path === '' ? '/' : path);
  url.search = query;
  return url.pathname.startsWith(`${prefix}/`) ? url : null;
}

/** Any `.` or `..` segment, however spelt: percent-decoded (repeatedly), backslashes as slashes, `;` params dropped. */
function hasDotSegment(path: string): boolean {
  let text = path;
  for (let round = 0; ; round++) {
    const decoded = text.replace(/%(2e|2f|5c|25)/gi, (escape) => decodeURIComponent(escape));
    if (decoded === text) break;
    if (round === 8) return true; // encoded over and over: nothing a zone app should ever receive
    text = decoded;
  }
  return text.split(/[/\\]/).some((segment) => {
    const name = segment.split(';')[0]!;
    return name === '.' || name === '..';
  });
}
