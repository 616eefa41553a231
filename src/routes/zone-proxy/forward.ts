// Streams one request to the zone app and its answer back (zones.md) through the zone proxy client: bodies flow
// through in both directions as they arrive (request body = the inbound socket stream, reply = undici's body
// stream), never buffered.
// The user's own credentials never leave: Authorization and every cookie are dropped (all cookies here are the
// platform origin's, since zone apps cannot set any), the zone JWT of this request is the only credential sent on.
// The answer comes back sandboxed, without the headers a zone app may not send (response-headers.ts).
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../errors.ts';
import type { ZoneProxyClient } from '../../zones/zone-proxy-client.ts';
import { isDroppedZoneHeader, platformZoneHeaders } from './response-headers.ts';
import { HOP_BY_HOP } from '../../lib/origin-headers.ts';

/** Inbound headers never forwarded: the user's credentials and cookies, a zone token the client made up, and what undici sets itself. */
const NOT_FORWARDED = new Set(['host', 'authorization', 'cookie', 'x-zone-token', 'expect', 'x-forwarded-host', 'x-forwarded-proto', 'x-forwarded-prefix']);

export function forwardedRequestHeaders(req: FastifyRequest, zoneToken: string, prefix: string): Record<string, string | string[]> {
  const listed = connectionListed(req.headers.connection);
  const out: Record<string, string | string[]> = {};
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || NOT_FORWARDED.has(name)) continue;
    out[name] = value;
  }
  const xff = req.headers['x-forwarded-for'];
  out['x-forwarded-for'] = xff ? `${String(xff)}, ${req.ip}` : req.ip;
  out['x-forwarded-proto'] = req.protocol;
  if (req.headers.host) out['x-forwarded-host'] = req.headers.host;
  out['x-forwarded-prefix'] = prefix;
  out['x-zone-token'] = zoneToken;
  return out;
}

export async function forward(
  client: ZoneProxyClient,
  req: FastifyRequest,
  reply: FastifyReply,
  target: URL,
  headers: Record<string, string | string[]>,
  framed: boolean,
): Promise<FastifyReply> {
  const hasBody = req.method !== 'GET' && req.method !== 'HEAD' && (req.headers['transfer-encoding'] !== undefined || Number(req.headers['content-length'] ?? 0) > 0);
  // The user went away: stop the upstream exchange too, in whichever direction it is.
  const abort = new AbortController();
  reply.raw.on('close', () => {
    if (!reply.raw.writableFinished) abort.abort();
  });
  const exchange = await client.send(target, { method: req.method, headers, body: hasBody ? req.raw : null, signal: abort.signal });
  if (!exchange.ok) {
    req.log.warn({ code: exchange.code }, 'zone app request failed');
    if (exchange.reason === 'timeout') throw new ApiError('upstream_timeout', 'the zone app did not answer in time');
    if (exchange.reason === 'blocked') throw new ApiError('upstream_failed', 'the zone app’s address is not allowed (a non-public address off ARS_OUTBOUND_ALLOW_HOSTS)');
    if (exchange.reason === 'too_large') throw new ApiError('upstream_failed', 'the zone app’s answer is larger than ARS_ZONE_MAX_RESPONSE_BYTES');
    throw new ApiError('upstream_failed', 'the zone app could not be reached');
  }
  const upstream = exchange.response;
  const listed = connectionListed(upstream.headers.connection);
  reply.code(upstream.statusCode);
  for (const [name, value] of Object.entries(upstream.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || listed.has(name) || isDroppedZoneHeader(name)) continue;
    if (name !== 'content-security-policy') reply.header(name, value);
  }
  reply.headers(platformZoneHeaders(listed.has('content-security-policy') ? undefined : upstream.headers['content-security-policy'], framed));
  return reply.send(upstream.body);
}

function connectionListed(header: string | string[] | undefined): Set<string> {
  const text = Array.isArray(header) ? header.join(',') : (header ?? '');
  return new Set(text.split(',').map((s) => s.trim().toLowerCase()).filter(Boolean));
}
