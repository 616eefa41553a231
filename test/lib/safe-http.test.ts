import http from 'node:http';
import type { AddressInfo } from 'node:net';
import net from 'node:net';
import tls from 'node:tls';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { createOutboundClient, type OutboundClient, type OutboundClientOptions } from '../../src/lib/safe-http.ts';
import { TestReceiver } from './receiver.ts';

const receiver = new TestReceiver();
const received = receiver.received;
let port: number;

beforeAll(async () => {
  port = (await receiver.start()).port;
});

afterAll(() => receiver.stop());

const clients: OutboundClient[] = [];
function client(options: Partial<OutboundClientOptions> = {}): OutboundClient {
  const c = createOutboundClient({ allowHosts: [], ...options });
  clients.push(c);
  return c;
}

afterEach(async () => {
  vi.restoreAllMocks();
  received.length = 0;
  receiver.dropConnections();
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
    receiver.dropConnections();
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

const form = () => new URLSearchParams({ grant_type: 'refresh_token', refresh_token: 'r' });
const local = (options: Partial<OutboundClientOptions> = {}) => client({ allowHosts: ['127.0.0.1'], ...options });
const at = (path: string) => `http://127.0.0.1:${port}${path}`;

// What oauth4webapi calls for OAuth token endpoints: the same guard as deliveries, redirects returned (never
// followed), one deadline and a bounded answer.
describe('guarded fetch', () => {
  it('decisions "One way per job": answers a standard Response with status, headers and the whole body', async () => {
    const res = await local().fetch(at('/token?status=201'), { method: 'POST', headers: { accept: 'application/json' }, body: form() });
    expect(res).toBeInstanceOf(Response);
    expect(res.status).toBe(201);
    expect(res.headers.get('content-type')).toBe('text/plain');
    expect(await res.text()).toBe('thanks');
    expect(received[0]).toMatchObject({ method: 'POST', url: '/token?status=201', body: 'grant_type=refresh_token&refresh_token=r' });
    expect(received[0]?.headers.accept).toBe('application/json');
  });

  it('decisions "One way per job": loopback, private and metadata addresses off the allow-list are refused before any socket', async () => {
    const connect = vi.spyOn(net, 'connect');
    const c = client();
    for (const url of [at('/token'), 'http://10.0.0.1/token', 'https://169.254.169.254/token', 'https://[::1]/token']) {
      await expect(c.fetch(url, { method: 'POST', body: form() }), url).rejects.toMatchObject({ code: 'ARS_OUTBOUND_BLOCKED' });
    }
    expect(connect).not.toHaveBeenCalled();
    expect(received).toHaveLength(0);
  });

  it('decisions "One way per job": a name resolving to a private address is refused on the resolved address', async () => {
    const resolve = vi.fn(async () => [{ address: '127.0.0.1', family: 4 }]);
    await expect(client({ resolve }).fetch(`http://idp.test:${port}/token`)).rejects.toMatchObject({ code: 'ARS_OUTBOUND_BLOCKED' });
    expect(resolve).toHaveBeenCalledOnce();
    expect(received).toHaveLength(0);
  });

  it('decisions "One way per job": a redirect is answered as it is, never followed; a null-body status has no body', async () => {
    const res = await local().fetch(at('/redirect?status=302'), { method: 'POST', body: form() });
    expect(res.status).toBe(302);
    expect(res.headers.get('location')).toBe('/target');
    expect(received.map((r) => r.url)).toEqual(['/redirect?status=302']);
    expect((await local().fetch(at('/?status=204'))).body).toBeNull();
  });

  it('decisions "One way per job": an answer larger than maxResponseBytes fails', async () => {
    await expect(local().fetch(at('/big'))).rejects.toMatchObject({ code: 'ARS_OUTBOUND_TOO_LARGE' });
    const all = await local({ maxResponseBytes: 6 * 1024 * 1024 }).fetch(at('/big'));
    expect((await all.arrayBuffer()).byteLength).toBe(5 * 1024 * 1024);
  });

  it('decisions "One way per job": the client timeout and the caller signal both end a silent exchange', async () => {
    await expect(local({ timeoutMs: 300 }).fetch(at('/hang'))).rejects.toMatchObject({ name: 'TimeoutError' });
    const started = Date.now();
    await expect(local().fetch(at('/hang'), { signal: AbortSignal.timeout(200) })).rejects.toMatchObject({ name: 'TimeoutError' });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('decisions "One way per job": only http(s) URLs without credentials are fetched', async () => {
    const c = local();
    for (const url of ['file:///etc/passwd', 'ftp://127.0.0.1/', 'not a url', `http://user:pw@127.0.0.1:${port}/token`]) {
      await expect(c.fetch(url), url).rejects.toBeInstanceOf(TypeError);
    }
    expect(received).toHaveLength(0);
  });

  it('decisions "Credentials and zones": isAllowListed reports the operator list for a URL host', () => {
    const c = client({ allowHosts: ['127.0.0.1', 'idp.local'] });
    expect([c.isAllowListed('127.0.0.1'), c.isAllowListed('idp.local'), c.isAllowListed('localhost')]).toEqual([true, true, false]);
  });
});
