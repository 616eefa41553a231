import { describe, expect, it } from 'vitest';
import { isAddressAllowed, isHostListed, parseAllowList } from '../../src/lib/outbound-guard.ts';
import { createOutboundClient } from '../../src/lib/safe-http.ts';

describe('address classification', () => {
  const none = parseAllowList([]);

  it('spec 6 (decisions "Events"): only global unicast is reachable by default', () => {
    for (const ok of ['93.184.216.34', '8.8.8.8', '1.1.1.1', '2606:4700:4700::1111', '2001:4860:4860::8888']) {
      expect(isAddressAllowed(ok, none), ok).toBe(true);
    }
    for (const bad of [
      '127.0.0.1', '127.255.255.254', '10.0.0.1', '172.16.0.1', '172.31.0.1', '192.168.0.1', '169.254.169.254',
      '100.64.0.1', '100.127.255.254', '0.0.0.0', '224.0.0.1', '239.255.255.250', '255.255.255.255', '192.0.2.1',
      '198.18.0.1', '240.0.0.1', '::', '::1', 'fe80::1', 'fe80::1%eth0', 'fc00::1', 'fdff::1', 'ff02::1',
      '::ffff:127.0.0.1', '::ffff:10.0.0.1', '::ffff:169.254.169.254', '64:ff9b::a00:1', '2002:a00:1::', '2001:db8::1',
      'not-an-ip', '',
    ]) {
      expect(isAddressAllowed(bad, none), bad).toBe(false);
    }
  });

  it('spec 6 (decisions "Events"): allow-list CIDRs open exactly their range, mapped IPv6 included', () => {
    const allow = parseAllowList(['10.0.0.0/8', '::1', 'fd00::/8', '::ffff:192.168.1.0/120']);
    expect(isAddressAllowed('10.20.30.40', allow)).toBe(true);
    expect(isAddressAllowed('::ffff:10.20.30.40', allow)).toBe(true);
    expect(isAddressAllowed('11.0.0.1', allow)).toBe(true); // public anyway
    expect(isAddressAllowed('172.16.0.1', allow)).toBe(false);
    expect(isAddressAllowed('::1', allow)).toBe(true);
    expect(isAddressAllowed('fd12::1', allow)).toBe(true);
    expect(isAddressAllowed('fc00::1', allow)).toBe(false);
    expect(isAddressAllowed('192.168.1.9', allow)).toBe(true);
    expect(isAddressAllowed('192.168.2.9', allow)).toBe(false);
  });

  it('spec 6 (decisions "Configuration"): a malformed allow-list entry fails fast', () => {
    expect(() => parseAllowList(['10.0.0.0/33'])).toThrow(/ARS_OUTBOUND_ALLOW_HOSTS/);
    expect(() => parseAllowList(['exa mple.com'])).toThrow(TypeError);
    expect(() => parseAllowList(['http://example.com'])).toThrow(TypeError);
    expect(() => parseAllowList(['', '  ', 'hooks.example.com', 'localhost'])).not.toThrow();
    expect(() => createOutboundClient({ allowHosts: ['*'] })).toThrow(TypeError);
  });
});

describe('allow-list membership of a URL host', () => {
  it('decisions "Credentials and zones": a host is listed by its exact name, or as an IP literal inside a listed range', () => {
    const allow = parseAllowList(['LocalHost', '127.0.0.1', '10.0.0.0/8', '::1']);
    for (const host of ['localhost', 'localhost.', '127.0.0.1', '10.9.8.7', '[::1]', '::1', '[::ffff:10.0.0.1]']) {
      expect(isHostListed(host, allow), host).toBe(true);
    }
    // A name is not listed because of what it resolves to, and an unlisted address is not listed for being public.
    for (const host of ['example.com', 'sub.localhost', '127.0.0.2', '8.8.8.8', '[::2]', '']) {
      expect(isHostListed(host, allow), host).toBe(false);
    }
  });
});
