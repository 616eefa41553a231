// Streams one request to the zone app and its answer back (zones.md): bodies flow through in both directions as
// they arrive (undici request body = the inbound socket stream, reply = undici's body stream), never buffered.
// The user's own credentials never leave: Authorization and the ars_session cookie are dropped, the zone JWT of
// this request is the only credential sent on.
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Agent } from 'undici';
import { ApiError } from '../../errors.ts';
import { SESSION_COOKIE, withoutSessionCookie } from '../../orgs/user-auth.ts';

/** RFC 9110 §7.6.1 connection-specific headers, plus the non-standard ones proxies also drop. */
const HOP_BY_HOP = new Set(['connection', 'keep-alive', 'proxy-authenticate', 'proxy-authorization', 'proxy-connection', 'te', 'trailer', 'transfer-encoding', 'upgrade']);
/** Inbound headers never forwarded: the user's credentials, a zone token the client made up, and what undici sets itself. */
const NOT_FORWARDED = new Set(['host', 'authorization', 'cookie', 'x-zone-token', 'expect', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix']);

/**
 * Bounded upstream timeouts: 10 s to connect, 30 s for the zone app to start answering, 60 s of silence within a
 * body (either direction) before the exchange is cut.
 */
export function createZoneDispatcher(): Agent {
  return new Agent({ connect: { timeout: 10_000 }, headersTimeout: 30_000, bodyTimeout: 60_000 });
}

/** `{zone_app_url}/{path*}` with the query kept; null for a path with dot segments (no climbing out of the base). */
export function upstreamUrl(zoneAppUrl: string, rest: string): URL | null {
  const q = rest.indexOf('?');
  const path = q < 0 ? rest : rest.slice(0, q);
  const query = q < 0 ? '' : rest.slice(q);
  if (path.split('/').some(isDotSegment)) return null;
  const base = new URL(zoneAppUrl);
  const url = new URL(base.origin);
  url.pathname = base.pathname.replace(/\/+$/, '') + (path === '' ? '/' : path);
  url.search = query;
  return url;
}

export function forwardedRequestHeaders(req: FastifyRequest, zoneToken: string, prefix: string): Record<string, string | string[]> {
  const listed = connectionListed(req.headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || NOT_FORWARDED.has(name)) continue;
    out[name] = value;
  }
  const cookie = withoutSessionCookie(req.headers.cookie);
  if (cookie) out.cookie = cookie;
  const xff = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = xff ? `${String(xff)}, ${req.ip}` : req.ip;
  out['x-forwarded-proto'] = req.protocol;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  out['x-forwarded-prefix'] = prefix;
  out['x-zone-token'] = zoneToken;
  return out;
}

export async function forward(
  dispatcher: Agent,
  req: FastifyRequest,
  reply: FastifyReply,
  target: URL,
  headers: Record<string, string | string[]>,
): Promise<FastifyReply> {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
  // The user went away: stop the upstream exchange too, in whichever direction it is.
  const abort = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  let upstream;
  try {
    upstream = await dispatcher.request({
      origin: target.origin,
      path: target.pathname + target.search,
      method: req.method as 'GET',
      headers,
      body: hasBody ? req.raw : null,
      signal: abort.signal,
    });
  } catch (err) {
    const code = (err as { code?: unknown }).code;
    req.log.warn({ code: typeof code === 'string' ? code : undefined }, 'zone app request failed');
    if (code === 'UND_ERR_HEADERS_TIMEOUT' || code === 'UND_ERR_CONNECT_TIMEOUT') throw new ApiError('upstream_timeout', 'the zone app did not answer in time');
    throw new ApiError('upstream_failed', 'the zone app could not be reached');
  }
  const listed = connectionListed(upstream.headers.connection);
  reply.code(upstream.statusCode);
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name)) continue;
    if (name === 'set-cookie') {
      // A zone app must not be able to plant or overwrite the platform's session cookie.
      const kept = (Array.isArray(value) ? value : [value]).filter((c) => c.split('=')[0]!.trim() !== SESSION_COOKIE);
      if (kept.length > 0) reply.header(name, kept);
      continue;
    }
    reply.header(name, value);
  }
  return reply.send(upstream.body);
}

function connectionListed(header: string | string[] | undefined): Set<string> {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}

function isDotSegment(segment: string): boolean {
  let decoded = segment;
  try {
    decoded = decodeURIComponent(segment);
  } catch {
    // malformed escapes are the zone app's to refuse
  }
  return decoded === '.' || decoded === '..';
}
