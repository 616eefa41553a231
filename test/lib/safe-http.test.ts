import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  createOutboundClient,
  isAddressAllowed,
  parseAllowList,
  type OutboundClient,
  type OutboundClientOptions,
} from '../../src/lib/safe-http.ts';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const received: Received[] = [];
let server: http.Server;
let port: number;

// One real receiver; the path picks its behaviour.
beforeAll(async () => {
  server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      const url = new URL(req.url ?? '/', 'http://x');
      const status = Number(url.searchParams.get('status') ?? '200');
      if (url.pathname === '/hang') return; // never answers
      if (url.pathname === '/redirect') {
        res.writeHead(status, { location: '/target' }).end();
        return;
      }
      if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(5 * 1024 * 1024, 1));
        return;
      }
      if (url.pathname === '/endless') {
        res.writeHead(200);
        const chunk = Buffer.alloc(16 * 1024, 1);
        const timer = setInterval(() => res.write(chunk), 5);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end('thanks');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

const clients: OutboundClient[] = [];
function client(options: Partial<OutboundClientOptions> = {}): OutboundClient {
  const c = createOutboundClient({ allowHosts: [], ...options });
  clients.push(c);
  return c;
}

afterEach(async () => {
  vi.restoreAllMocks();
  received.length = 0;
  server.closeAllConnections();
  await Promise.all(clients.splice(0).map((c) => c.close()));
});

const BODY = JSON.stringify({ run: { id: 1 }, output: { ok: true } });

describe('outbound webhook delivery', () => {
  it('spec 6 (decisions "Events"): delivers the body and headers to an allow-listed receiver', async () => {
    // Watched here too, so the "no socket" assertions below are known to observe undici's real connects.
    const connect = vi.spyOn(net, 'connect');
    const result = await client({ allowHosts: ['127.0.0.1'] }).post(`http://127.0.0.1:${port}/hook?x=1`, BODY, {
      'webhook-id': 'msg_1',
    });
    expect(result).toEqual({ ok: true, status: 200 });
    expect(received).toHaveLength(1);
    expect(received[0]).toMatchObject({ method: 'POST', url: '/hook?x=1', body: BODY });
    expect(received[0]?.headers['webhook-id']).toBe('msg_1');
    expect(received[0]?.headers['content-type']).toBe('application/json');
    expect(connect).toHaveBeenCalledTimes(1);
  });

  it('spec 6 (decisions "Events"): a caller-supplied content-type wins over the JSON default', async () => {
    await client({ allowHosts: ['127.0.0.1'] }).post(`http://127.0.0.1:${port}/`, BODY, { 'Content-Type': 'application/cloudevents+json' });
    expect(received[0]?.headers['content-type']).toBe('application/cloudevents+json');
  });

  it('spec 6 (decisions "Events"): loopback 127.0.0.1 is refused without an allow-list entry, before any socket', async () => {
    const connect = vi.spyOn(net, 'connect');
    const result = await client().post(`http://127.0.0.1:${port}/`, BODY, {});
    expect(result).toEqual({ ok: false, reason: 'blocked_address', retryable: false });
    expect(connect).not.toHaveBeenCalled();
    expect(received).toHaveLength(0);
  });

  it('spec 6 (decisions "Events"): the allow-list accepts an IP, a CIDR or a host name', async () => {
    expect(await client({ allowHosts: ['127.0.0.1'] }).post(`http://127.0.0.1:${port}/`, BODY, {})).toEqual({ ok: true, status: 200 });
    expect(await client({ allowHosts: ['127.0.0.0/8'] }).post(`http://127.0.0.1:${port}/`, BODY, {})).toEqual({ ok: true, status: 200 });
    expect(await client({ allowHosts: ['localhost'] }).post(`http://localhost:${port}/`, BODY, {})).toEqual({ ok: true, status: 200 });
    expect(await client({ allowHosts: [' LOCALHOST. '] }).post(`http://localhost:${port}/`, BODY, {})).toEqual({ ok: true, status: 200 });
    // A CIDR covers the address a host name resolves to.
    expect(await client({ allowHosts: ['127.0.0.0/8'] }).post(`http://localhost:${port}/`, BODY, {})).toEqual({ ok: true, status: 200 });
    expect(received).toHaveLength(5);
  });

  it('spec 6 (decisions "Events"): a host-name entry does not open the address itself, nor other names', async () => {
    expect((await client({ allowHosts: ['localhost'] }).post(`http://127.0.0.1:${port}/`, BODY, {})).ok).toBe(false);
    expect(await client({ allowHosts: ['example.com'] }).post(`http://localhost:${port}/`, BODY, {})).toEqual({
      ok: false,
      reason: 'blocked_address',
      retryable: false,
    });
    expect(received).toHaveLength(0);
  });

  it('spec 6 (decisions "Events"): localhost by name is refused (checked on the resolved address)', async () => {
    expect(await client().post(`http://localhost:${port}/`, BODY, {})).toEqual({ ok: false, reason: 'blocked_address', retryable: false });
    expect(received).toHaveLength(0);
  });

  it('spec 6 (decisions "Events"): internal literal addresses are refused without any network traffic', async () => {
    const netConnect = vi.spyOn(net, 'connect');
    const tlsConnect = vi.spyOn(tls, 'connect');
    const c = client();
    const targets = [
      'http://10.0.0.1/',
      'http://169.254.169.254/latest/meta-data/',
      'http://172.16.0.1/',
      'http://172.31.255.255/',
      'http://192.168.1.1/',
      'http://100.64.0.1/',
      'http://0.0.0.0/',
      'http://224.0.0.1/',
      'http://255.255.255.255/',
      'http://2130706433/', // 127.0.0.1 written as one number
      'http://0x7f.1/', // 127.0.0.1 in hex shorthand
      `http://[::1]:${port}/`,
      'http://[::]/',
      'http://[fe80::1]/',
      'http://[fc00::1]/',
      'http://[fd12:3456::1]/',
      'http://[ff02::1]/',
      'http://[::ffff:127.0.0.1]/',
      'http://[::ffff:169.254.169.254]/',
      'http://[::ffff:10.0.0.1]/',
      'https://10.0.0.1/',
      'https://[::1]/',
    ];
    for (const url of targets) {
      expect(await c.post(url, BODY, {}), url).toEqual({ ok: false, reason: 'blocked_address', retryable: false });
    }
    expect(netConnect).not.toHaveBeenCalled();
    expect(tlsConnect).not.toHaveBeenCalled();
  });

  it('spec 6 (decisions "Events"): a name resolving to a metadata or private address is refused at connect time', async () => {
    const resolve = vi.fn(async (hostname: string) => {
      if (hostname === 'metadata.test') return [{ address: '169.254.169.254', family: 4 }];
      return [{ address: '10.1.2.3', family: 4 }, { address: 'fd00::1', family: 6 }];
    });
    const c = client({ resolve });
    expect(await c.post('http://metadata.test/', BODY, {})).toEqual({ ok: false, reason: 'blocked_address', retryable: false });
    expect(await c.post('https://internal.test/', BODY, {})).toEqual({ ok: false, reason: 'blocked_address', retryable: false });
    expect(resolve).toHaveBeenCalledTimes(2);
  });

  it('spec 6 (decisions "Events"): the connection uses the checked answer; refused addresses in it are dropped', async () => {
    // One DNS answer mixing a private address and an allowed one: only the allowed one may be dialled.
    const resolve = vi.fn(async () => [
      { address: '10.0.0.1', family: 4 },
      { address: '127.0.0.1', family: 4 },
    ]);
    const result = await client({ allowHosts: ['127.0.0.1'], resolve }).post(`http://receiver.test:${port}/`, BODY, {});
    expect(result).toEqual({ ok: true, status: 200 });
    expect(resolve).toHaveBeenCalledWith('receiver.test', expect.any(Number));
    expect(received[0]?.headers.host).toBe(`receiver.test:${port}`);
  });

  it('spec 6 (decisions "Events"): every new connection re-resolves, so a rebound answer is checked again', async () => {
    let answer = '127.0.0.1';
    const resolve = vi.fn(async () => [{ address: answer, family: 4 }]);
    const c = client({ allowHosts: ['127.0.0.1'], resolve });
    expect((await c.post(`http://rebind.test:${port}/`, BODY, { connection: 'close' })).ok).toBe(true);
    answer = '169.254.169.254';
    server.closeAllConnections();
    expect(await c.post(`http://rebind.test:${port}/`, BODY, {})).toEqual({ ok: false, reason: 'blocked_address', retryable: false });
    expect(resolve).toHaveBeenCalledTimes(2);
  });

  it('spec 6 (decisions "Events"): only http and https URLs without credentials are accepted', async () => {
    const c = client({ allowHosts: ['127.0.0.1'] });
    for (const url of ['ftp://127.0.0.1/', 'file:///etc/passwd', 'javascript:alert(1)', 'not a url', '', `http://user:pw@127.0.0.1:${port}/`]) {
      expect(await c.post(url, BODY, {}), url).toMatchObject({ ok: false, reason: 'invalid_url', retryable: false });
    }
    expect(received).toHaveLength(0);
  });

  it('spec 6 (decisions "Events"): a header undici refuses is a permanent failure, not a network error', async () => {
    const result = await client({ allowHosts: ['127.0.0.1'] }).post(`http://127.0.0.1:${port}/`, BODY, { 'x-bad': 'a\r\nx-injected: 1' });
    expect(result).toEqual({ ok: false, reason: 'invalid_request', retryable: false });
    expect(received).toHaveLength(0);
  });

  it('spec 6 (decisions "Events"): a redirect is a failed delivery and is never followed', async () => {
    const c = client({ allowHosts: ['127.0.0.1'] });
    for (const status of [301, 302, 303, 307, 308]) {
      expect(await c.post(`http://127.0.0.1:${port}/redirect?status=${status}`, BODY, {})).toEqual({
        ok: false,
        reason: 'redirect',
        retryable: false,
        status,
      });
    }
    expect(received.map((r) => r.url.split('?')[0])).toEqual(Array(5).fill('/redirect'));
  });

  it('spec 6 (decisions "Events"): 2xx is delivered; 5xx, 408, 425 and 429 are retryable; other 4xx are not', async () => {
    const c = client({ allowHosts: ['127.0.0.1'] });
    const post = (status: number) => c.post(`http://127.0.0.1:${port}/?status=${status}`, BODY, {});
    expect(await post(201)).toEqual({ ok: true, status: 201 });
    expect(await post(204)).toEqual({ ok: true, status: 204 });
    for (const status of [500, 502, 503, 504, 408, 425, 429]) {
      expect(await post(status)).toEqual({ ok: false, reason: 'http_error', retryable: true, status });
    }
    for (const status of [400, 401, 403, 404, 410, 413, 422]) {
      expect(await post(status)).toEqual({ ok: false, reason: 'http_error', retryable: false, status });
    }
  });

  it('spec 6 (decisions "Events"): the total timeout is honoured when the receiver never answers', async () => {
    const result = await client({ allowHosts: ['127.0.0.1'], timeoutMs: 300 }).post(`http://127.0.0.1:${port}/hang`, BODY, {});
    expect(result).toEqual({ ok: false, reason: 'timeout', retryable: true });
  });

  it('spec 6 (decisions "Events"): the total timeout also bounds a DNS lookup that never returns', async () => {
    const resolve = () => new Promise<never>(() => undefined);
    const result = await client({ timeoutMs: 300, resolve }).post('http://slow-dns.test/', BODY, {});
    expect(result).toEqual({ ok: false, reason: 'timeout', retryable: true });
  });

  it('spec 6 (decisions "Events"): the response body is drained but bounded', async () => {
    const c = client({ allowHosts: ['127.0.0.1'], timeoutMs: 5000 });
    expect(await c.post(`http://127.0.0.1:${port}/big`, BODY, {})).toEqual({ ok: true, status: 200 });
    // An endless body would otherwise hold the delivery until the timeout.
    expect(await c.post(`http://127.0.0.1:${port}/endless`, BODY, {})).toEqual({ ok: true, status: 200 });
  });

  it('spec 6 (decisions "Events"): a refused connection is a retryable network error', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    expect(await client({ allowHosts: ['127.0.0.1'] }).post(`http://127.0.0.1:${closedPort}/`, BODY, {})).toEqual({
      ok: false,
      reason: 'network_error',
      retryable: true,
      detail: 'ECONNREFUSED',
    });
  });
});

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
