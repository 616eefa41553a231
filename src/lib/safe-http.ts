// Outbound delivery for webhook actions (decisions.md "Events"): SSRF-guarded, 15 s total, no redirects.
// The address check runs inside the connector, on the addresses the socket will actually use, so a DNS answer
// that changes between a pre-check and the connect (rebinding) cannot reach an internal address. Pooled
// connections are only ever opened through that connector, so reusing one reuses an already-checked address.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { Agent, buildConnector } from 'undici';

type IP = ipaddr.IPv4 | ipaddr.IPv6;
type Resolver = (hostname: string, family: number) => Promise<dns.LookupAddress[]>;

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
  close(): Promise<void>;
}

export interface OutboundClientOptions {
  /** Parsed `ARS_OUTBOUND_ALLOW_HOSTS`: exact host names, IP addresses and CIDRs exempt from the guard. */
  allowHosts: string[];
  timeoutMs?: number;
  /** Response bytes read before the body is abandoned; the status is all a delivery needs. */
  maxResponseBytes?: number;
  /** DNS resolution, replaceable in tests; defaults to dns.lookup with all: true. */
  resolve?: Resolver;
}

/** Raised inside the connector; `code` survives undici and net, which pass connect errors through as-is. */
export class OutboundBlockedError extends Error {
  readonly code = 'ARS_OUTBOUND_BLOCKED';
  constructor(host: string) {
    super(`outbound address for ${host} is not allowed`);
  }
}

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

  return { post, close: () => agent.close() };
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

function guardedConnector(allow: AllowList, resolve: Resolver, timeoutMs: number): buildConnector.connector {
  const lookup: net.LookupFunction = (hostname, lookupOptions, callback) => {
    const family = typeof lookupOptions.family === 'number' ? lookupOptions.family : 0;
    resolve(hostname, family).then(
      (addresses) => {
        // Keep only the addresses we may reach, so the socket can never try a refused one.
        const usable = allow.hosts.has(normalizeHost(hostname))
          ? addresses
          : addresses.filter((entry) => isAddressAllowed(entry.address, allow));
        const first = usable[0];
        if (first === undefined) return callback(new OutboundBlockedError(hostname), '', 0);
        if (lookupOptions.all) return callback(null, usable);
        callback(null, first.address, first.family);
      },
      (err: NodeJS.ErrnoException) => callback(err, '', 0),
    );
  };
  const connect = buildConnector({ lookup, timeout: timeoutMs });

  return (connectOptions, callback) => {
    // net.connect skips `lookup` for IP literals, so literals are checked here, before any socket exists.
    const host = connectOptions.hostname.replace(/^\[(.*)\]$/, '$1');
    if (net.isIP(host) !== 0 && !isAddressAllowed(host, allow)) {
      callback(new OutboundBlockedError(host), null);
      return;
    }
    connect(connectOptions, callback);
  };
}

const systemResolve: Resolver = (hostname, family) => dns.promises.lookup(hostname, { all: true, family });

export interface AllowList {
  hosts: Set<string>;
  cidrs: [IP, number][];
}

/** Entries are exact host names ("localhost"), IP addresses ("127.0.0.1", "::1") or CIDRs ("10.0.0.0/8"). */
export function parseAllowList(entries: string[]): AllowList {
  const allow: AllowList = { hosts: new Set(), cidrs: [] };
  for (const raw of entries) {
    const entry = raw.trim().replace(/^\[(.*)\]$/, '$1');
    if (entry === '') continue;
    if (ipaddr.isValidCIDR(entry)) {
      const [ip, bits] = ipaddr.parseCIDR(entry);
      allow.cidrs.push(unmapCidr(ip, bits));
    } else if (net.isIP(entry) !== 0) {
      const ip = unmap(ipaddr.parse(entry));
      allow.cidrs.push([ip, ip.kind() === 'ipv4' ? 32 : 128]);
    } else if (/^[a-z0-9]([a-z0-9-]*[a-z0-9])?(\.[a-z0-9]([a-z0-9-]*[a-z0-9])?)*\.?$/i.test(entry)) {
      allow.hosts.add(normalizeHost(entry));
    } else {
      // Fail fast at start (house style 7): a typo here would otherwise silently block deliveries.
      throw new TypeError(`ARS_OUTBOUND_ALLOW_HOSTS: "${raw}" is not a host name, IP address or CIDR`);
    }
  }
  return allow;
}

/** Only globally routable unicast is reachable by default; an allow-list CIDR overrides that. */
export function isAddressAllowed(address: string, allow: AllowList): boolean {
  let ip: IP;
  try {
    // An IPv6 zone id ("fe80::1%eth0") is not part of the address range.
    ip = unmap(ipaddr.parse(address.replace(/%.*$/, '')));
  } catch {
    return false;
  }
  if (allow.cidrs.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits))) return true;
  return ip.range() === 'unicast';
}

// IPv4-mapped IPv6 (::ffff:a.b.c.d) reaches the IPv4 host, so it is judged as that IPv4 address.
function unmap(ip: IP): IP {
  return ip.kind() === 'ipv6' && (ip as ipaddr.IPv6).isIPv4MappedAddress() ? (ip as ipaddr.IPv6).toIPv4Address() : ip;
}

function unmapCidr(ip: IP, bits: number): [IP, number] {
  return ip.kind() === 'ipv6' && bits >= 96 && (ip as ipaddr.IPv6).isIPv4MappedAddress()
    ? [(ip as ipaddr.IPv6).toIPv4Address(), bits - 96]
    : [ip, bits];
}

function normalizeHost(host: string): string {
  return host.toLowerCase().replace(/\.$/, '');
}
