import http from 'node:http';
import { describe, expect, it } from 'vitest';
import { shapeWebhookResponse } from '../../src/webhooks/webhook-response.ts';

const JSON_TYPE = 'application/json; charset=utf-8';
const TEXT_TYPE = 'text/plain; charset=utf-8';
const shape = (webhookResponse: unknown) => shapeWebhookResponse({ webhookResponse, other: 'ignored' });

describe('webhook-and-wait 200 shaping (spec 4.7)', () => {
  it('spec 4.7: without webhookResponse the agent output itself is the JSON body', () => {
    const output = { result: 'done', outputs: 3, nested: { a: [1] } };
    const shaped = shapeWebhookResponse(output);
    expect(shaped.status).toBe(200);
    expect(shaped.contentType).toBe(JSON_TYPE);
    expect(JSON.parse(shaped.body)).toEqual(output);
    for (const value of [null, undefined, 'text', 42, [1, 2], true]) {
      const result = shapeWebhookResponse(value);
      expect(result.status).toBe(200);
      expect(result.contentType).toBe(JSON_TYPE);
      expect(result.body).toBe(JSON.stringify(value ?? null));
    }
  });

  it('spec 4.7: a webhookResponse that is not an object leaves the output unshaped', () => {
    for (const webhookResponse of ['x', 5, null, [1], true]) {
      const output = { webhookResponse, data: 1 };
      const shaped = shapeWebhookResponse(output);
      expect(shaped).toMatchObject({ status: 200, contentType: JSON_TYPE });
      expect(JSON.parse(shaped.body)).toEqual(output);
    }
  });

  it('spec 4.7: webhookResponse controls status, headers and body; the rest of the output is not sent', () => {
    const shaped = shape({ status: 201, headers: { 'X-Request-Id': 'r1' }, body: { accepted: true } });
    expect(shaped.status).toBe(201);
    expect(shaped.headers['x-request-id']).toBe('r1');
    expect(shaped.contentType).toBe(JSON_TYPE);
    expect(JSON.parse(shaped.body)).toEqual({ accepted: true });
  });

  it('spec 4.7: status is clamped to 200–499 and never 3xx or 5xx', () => {
    const cases: Array<[unknown, number]> = [
      [200, 200], [202, 202], [299, 299], [400, 400], [404, 404], [429, 429], [499, 499],
      [500, 499], [503, 499], [999, 499], [100, 200], [101, 200], [0, 200], [-1, 200],
      [301, 200], [302, 200], [304, 200], [399, 200],
      [201.5, 200], ['404', 200], [undefined, 200], [null, 200], [Number.NaN, 200], [Infinity, 200],
    ];
    for (const [status, expected] of cases) {
      expect(shape({ status }).status, String(status)).toBe(expected);
    }
  });

  it('spec 4.7: a string body is text/plain, anything else JSON, an absent body is empty', () => {
    expect(shape({ body: 'hello' })).toMatchObject({ body: 'hello', contentType: TEXT_TYPE });
    expect(shape({ body: '' })).toMatchObject({ body: '', contentType: TEXT_TYPE });
    expect(shape({ body: 12 })).toMatchObject({ body: '12', contentType: JSON_TYPE });
    expect(shape({ body: null })).toMatchObject({ body: 'null', contentType: JSON_TYPE });
    expect(shape({ body: [1, 'a'] })).toMatchObject({ body: '[1,"a"]', contentType: JSON_TYPE });
    expect(shape({ body: false })).toMatchObject({ body: 'false', contentType: JSON_TYPE });
    expect(shape({ status: 202 })).toMatchObject({ status: 202, body: '', contentType: TEXT_TYPE });
  });

  it('spec 4.7: a supplied content-type wins for string bodies, and for JSON bodies only if it is JSON', () => {
    expect(shape({ body: '<ok/>', headers: { 'Content-Type': 'application/xml' } }).contentType).toBe('application/xml');
    expect(shape({ body: { a: 1 }, headers: { 'content-type': 'application/problem+json' } }).contentType).toBe('application/problem+json');
    expect(shape({ body: { a: 1 }, headers: { 'content-type': 'application/json; charset=utf-8' } }).contentType).toBe(JSON_TYPE);
    expect(shape({ body: { a: 1 }, headers: { 'content-type': 'text/html' } }).contentType).toBe(JSON_TYPE);
    expect(shape({ body: { a: 1 }, headers: { 'content-type': 'application/jsonp' } }).contentType).toBe(JSON_TYPE);
    // content-type is reported once, in contentType, never duplicated in headers.
    expect(shape({ body: 'x', headers: { 'content-type': 'text/csv' } }).headers['content-type']).toBeUndefined();
  });

  it('spec 4.7: 204 and 205 carry no body', () => {
    expect(shape({ status: 204, body: { ignored: true } })).toMatchObject({ status: 204, body: '' });
    expect(shape({ status: 205, body: 'ignored' })).toMatchObject({ status: 205, body: '' });
  });

  it('spec 4.7: only string header values are kept', () => {
    const { headers } = shape({ headers: { 'x-a': 'yes', 'x-n': 5, 'x-b': true, 'x-o': { v: 1 }, 'x-l': ['a'], 'x-null': null, 'x-empty': '' } });
    expect(headers).toMatchObject({ 'x-a': 'yes', 'x-empty': '' });
    for (const name of ['x-n', 'x-b', 'x-o', 'x-l', 'x-null']) expect(headers[name]).toBeUndefined();
    expect(shape({ headers: 'x-a: 1' }).headers['x-a']).toBeUndefined();
    expect(shape({ headers: [['x-a', '1']] }).headers['x-a']).toBeUndefined();
  });

  it('spec 4.7: content-length, set-cookie and hop-by-hop headers are dropped', () => {
    const { headers } = shape({
      headers: {
        'Content-Length': '999',
        'Set-Cookie': 'session=evil',
        Connection: 'close, X-Secret-Internal',
        'Keep-Alive': 'timeout=5',
        'Proxy-Authenticate': 'Basic',
        'Proxy-Authorization': 'Basic x',
        TE: 'trailers',
        Trailer: 'Expires',
        Trailers: 'x',
        'Transfer-Encoding': 'chunked',
        Upgrade: 'websocket',
        'Proxy-Connection': 'keep-alive',
        'Content-Encoding': 'gzip',
        'X-Secret-Internal': 'listed in connection',
        'X-Kept': 'yes',
      },
    });
    expect(headers).toEqual({ 'x-kept': 'yes', 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' });
  });

  it('spec 4.7: names or values that could inject a header line never reach the wire', () => {
    const { headers } = shape({
      headers: {
        'X-Inject': 'a\r\nSet-Cookie: pwned=1',
        'X-Lf': 'a\nb',
        'X-Cr': 'a\rb',
        'X-Nul': 'a\u0000b',
        'X-Unicode': 'caf\u00e9 \u2713',
        'Bad Name': 'v',
        'X-Bad\r\nName': 'v',
        'X-Colon:': 'v',
        '': 'v',
        'X-Tab': 'a\tb',
        'X-Latin1': 'caf\u00e9',
      },
    });
    expect(headers).toEqual({
      'x-tab': 'a\tb',
      'x-latin1': 'caf\u00e9',
      'content-security-policy': 'sandbox',
      'x-content-type-options': 'nosniff',
    });
    // And what is left is accepted by Node's own header validation.
    for (const [name, value] of Object.entries(headers)) {
      expect(() => http.validateHeaderName(name)).not.toThrow();
      expect(() => http.validateHeaderValue(name, value)).not.toThrow();
    }
  });

  it('spec 4.7: a header named __proto__ is an ordinary entry, never a prototype change', () => {
    const webhookResponse = JSON.parse('{"headers":{"__proto__":"x","constructor":"y"}}') as unknown;
    const { headers } = shape(webhookResponse);
    expect(Object.getPrototypeOf(headers)).toBe(Object.prototype);
    expect(Object.keys(headers)).toEqual(expect.arrayContaining(['__proto__', 'constructor']));
    expect(Object.getOwnPropertyDescriptor(headers, '__proto__')?.value).toBe('x');
    expect(headers.constructor).toBe('y');
  });

  it('spec 4.7: the response is served with nosniff and a sandbox CSP', () => {
    const html = shape({ body: '<script>alert(1)</script>', headers: { 'content-type': 'text/html', 'X-Content-Type-Options': 'off' } });
    expect(html.contentType).toBe('text/html');
    expect(html.headers['x-content-type-options']).toBe('nosniff');
    expect(html.headers['content-security-policy']).toBe('sandbox');
    expect(shapeWebhookResponse({ a: 1 }).headers).toEqual({ 'content-security-policy': 'sandbox', 'x-content-type-options': 'nosniff' });
  });

  // Issue 12 finding 1: an agent's own policy used to replace the sandbox, so an agent (or caller input it echoes)
  // could serve script with the platform origin's privileges. Now it is added as a second policy of the list.
  it.each([
    ["default-src 'self'"],
    ['sandbox allow-scripts allow-same-origin'],
    ["script-src 'unsafe-inline' *"],
  ])('issue 12: an agent CSP (%s) is added to the sandbox, never instead of it', (own) => {
    const shaped = shape({ body: '<script>alert(1)</script>', headers: { 'content-type': 'text/html', 'Content-Security-Policy': own } });
    const policies = shaped.headers['content-security-policy']!.split(',').map((p) => p.trim());
    expect(policies).toEqual(['sandbox', own]);
  });

  it('spec 4.7: the shaped response can be written by a real Node server', async () => {
    const shaped = shape({ status: 418, headers: { 'X-Tea': 'earl grey', 'X-Bad': 'a\r\nb' }, body: 'short and stout' });
    const server = http.createServer((_req, res) => {
      res.writeHead(shaped.status, { ...shaped.headers, 'content-type': shaped.contentType }).end(shaped.body);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    const response = await fetch(`http://127.0.0.1:${port}/`);
    expect(response.status).toBe(418);
    expect(response.headers.get('x-tea')).toBe('earl grey');
    expect(response.headers.get('x-bad')).toBeNull();
    expect(response.headers.get('content-type')).toBe(TEXT_TYPE);
    expect(await response.text()).toBe('short and stout');
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });
});
