// The SSRF guard of the outbound client (safe-http.ts): which addresses a tenant- or runtime-supplied URL may reach.
// The address check runs inside the connector, on the addresses the socket will actually use, so a DNS answer
// that changes between a pre-check and the connect (rebinding) cannot reach an internal address. Pooled
// connections are only ever opened through that connector, so reusing one reuses an already-checked address.
import dns from 'node:dns';
import net from 'node:net';
import ipaddr from 'ipaddr.js';
import { buildConnector } from 'undici';

type IP = ipaddr.IPv4 | ipaddr.IPv6;
export type Resolver = (hostname: string, family: number) => Promise<dns.LookupAddress[]>;

/** Raised inside the connector; `code` survives undici and net, which pass connect errors through as-is. */
export class OutboundBlockedError extends Error {
  readonly code = 'ARS_OUTBOUND_BLOCKED';
  constructor(host: string) {
    super(`outbound address for ${host} is not allowed`);
  }
}

export function guardedConnector(allow: AllowList, resolve: Resolver, timeoutMs: number): buildConnector.connector {
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
  // HTTP/1.1 only, as before undici 8 (which offers h2 over TLS by default): see docs/decisions.md, issue 38.
  const connect = buildConnector({ lookup, timeout: timeoutMs, allowH2: false });

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

export const systemResolve: Resolver = (hostname, family) => dns.promises.lookup(hostname, { all: true, family });

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
  const ip = parseIp(address);
  if (ip === null) return false;
  return inListedRange(ip, allow) || ip.range() === 'unicast';
}

/** The URL host (a name, or an IP literal with or without brackets) is itself on the operator's list. */
export function isHostListed(host: string, allow: AllowList): boolean {
  const bare = host.replace(/^\[(.*)\]$/, '$1');
  if (net.isIP(bare.replace(/%.*$/, '')) === 0) return allow.hosts.has(normalizeHost(bare));
  const ip = parseIp(bare);
  return ip !== null && inListedRange(ip, allow);
}

function parseIp(address: string): IP | null {
  try {
    // An IPv6 zone id ("fe80::1%eth0") is not part of the address range.
    return unmap(ipaddr.parse(address.replace(/%.*$/, '')));
  } catch {
    return null;
  }
}

function inListedRange(ip: IP, allow: AllowList): boolean {
  return allow.cidrs.some(([range, bits]) => range.kind() === ip.kind() && ip.match(range, bits));
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
