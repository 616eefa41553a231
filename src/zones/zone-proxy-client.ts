// The zone proxy's upstream HTTP client (zones.md): where a proxied request lands on the agent's zone app, and one
// bounded exchange with it. Bodies stream in both directions; nothing is buffered here.
// Not the SSRF-guarded client (lib/safe-http.ts): zone_app_url is admin-configured; its SSRF policy is another issue.
import type { Readable } from 'node:stream';
import { Agent, type Dispatcher } from 'undici';

export interface ZoneRequest {
  method: string;
  headers: Record<string, string | string[]>;
  /** The inbound request stream, piped on as it arrives; null when there is no body. */
  body: Readable | null;
  signal: AbortSignal;
}

export type ZoneExchange =
  | { ok: true; response: Dispatcher.ResponseData }
  | { ok: false; reason: 'timeout' | 'unreachable'; code: string | undefined };

export interface ZoneProxyClient {
  send(target: URL, request: ZoneRequest): Promise<ZoneExchange>;
  /** Cuts open exchanges too: at shutdown a held zone-app stream is not worth waiting for. */
  close(): Promise<void>;
}

/**
 * Bounded upstream timeouts: 10 s to connect, 30 s for the zone app to start answering, 60 s of silence within a
 * body (either direction) before the exchange is cut.
 */
export function createZoneProxyClient(): ZoneProxyClient {
  const dispatcher = new Agent({ connect: { timeout: 10_000 }, headersTimeout: 30_000, bodyTimeout: 60_000 });
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
        return { ok: true, response };
      } catch (err) {
        const raw = (err as { code?: unknown }).code;
        const code = typeof raw === 'string' ? raw : undefined;
        const timedOut = code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT';
        return { ok: false, reason: timedOut ? 'timeout' : 'unreachable', code };
      }
    },
    close: () => dispatcher.destroy(),
  };
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
