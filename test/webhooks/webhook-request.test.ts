import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';
import {
  buildWebhookObject,
  isSecretHeader,
  redactForStorage,
  type BuildWebhookInput,
} from '../../src/webhooks/webhook-request.ts';
import { MAX_JSON_DEPTH } from '../../src/lib/storable-json.ts';

const receivedAt = new Date('2025-03-01T12:00:00.123Z');

function build(overrides: Partial<BuildWebhookInput> = {}) {
  return buildWebhookObject({
    method: 'POST',
    rawUrl: '/api/agents/1/runs/webhook/tok',
    headers: { 'content-type': 'application/json' },
    rawBody: Buffer.from(''),
    receivedAt,
    ...overrides,
  });
}

const query = (rawUrl: string) => build({ rawUrl }).query;
const body = (raw: string | Buffer) => build({ rawBody: typeof raw === 'string' ? Buffer.from(raw) : raw });

function containsNul(value: unknown): boolean {
  if (typeof value === 'string') return value.includes('\u0000');
  if (Array.isArray(value)) return value.some(containsNul);
  if (typeof value === 'object' && value !== null) {
    return Object.entries(value).some(([k, v]) => k.includes('\u0000') || containsNul(v));
  }
  return false;
}

describe('webhook object (spec 4.6)', () => {
  it('spec 4.6: carries method, raw body, encoding and receivedAt as an ISO string', () => {
    const webhook = build({ method: 'PUT', rawBody: Buffer.from('{"a":1}') });
    expect({ ...webhook, query: { ...webhook.query }, headers: { ...webhook.headers } }).toEqual({
      method: 'PUT',
      query: {},
      headers: { 'content-type': 'application/json' },
      body: { a: 1 },
      rawBody: '{"a":1}',
      rawBodyEncoding: 'utf8',
      receivedAt: '2025-03-01T12:00:00.123Z',
    });
  });

  describe('query', () => {
    it('spec 4.6: the query string becomes a flat record', () => {
      expect({ ...query('/hook?a=1&b=two&empty=&flag') }).toEqual({ a: '1', b: 'two', empty: '', flag: '' });
      expect({ ...query('/hook') }).toEqual({});
      expect({ ...query('/hook?') }).toEqual({});
    });

    it('spec 4.6: repeated query keys are comma-joined in arrival order', () => {
      expect({ ...query('/hook?tag=b&x=1&tag=a&tag=c') }).toEqual({ tag: 'b,a,c', x: '1' });
      expect({ ...query('/hook?k=&k=2') }).toEqual({ k: ',2' });
    });

    it('spec 4.6: keys and values are percent-decoded, + is a space, the fragment is ignored', () => {
      expect({ ...query('/hook?na%20me=J%C3%BCrgen+Smith&sum=1%2B1&bad=%ZZ#frag=x') }).toEqual({
        'na me': 'Jürgen Smith',
        sum: '1+1',
        bad: '%ZZ',
      });
    });

    it('spec 4.6: 10,000 repeated keys stay fast and are all kept', () => {
      const rawUrl = '/hook?' + Array.from({ length: 10_000 }, (_, i) => `k=${i}`).join('&');
      const result = query(rawUrl);
      expect(result.k?.split(',')).toHaveLength(10_000);
      expect(result.k?.endsWith(',9998,9999')).toBe(true);
      const distinct = query('/hook?' + Array.from({ length: 10_000 }, (_, i) => `k${i}=${i}`).join('&'));
      expect(Object.keys(distinct)).toHaveLength(10_000);
    });

    it('spec 4.6: __proto__ and constructor are ordinary keys: no pollution, still serialized', () => {
      const result = query('/hook?__proto__=x&constructor=y&toString=z&__proto__[polluted]=1&hasOwnProperty=w');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.keys(result)).toEqual(['__proto__', 'constructor', 'toString', '__proto__[polluted]', 'hasOwnProperty']);
      expect(result.__proto__).toBe('x');
      expect(JSON.parse(JSON.stringify(result))).toEqual(
        JSON.parse('{"__proto__":"x","constructor":"y","toString":"z","__proto__[polluted]":"1","hasOwnProperty":"w"}'),
      );
      expect(JSON.stringify(result)).toContain('"__proto__":"x"');
      const repeated = query('/hook?' + Array(10_000).fill('__proto__=1').join('&'));
      expect(repeated.__proto__?.length).toBe(10_000 * 2 - 1);
    });
  });

  describe('headers', () => {
    it('spec 4.6: every inbound header is kept verbatim with lowercased names, authorization included', () => {
      const headers = build({
        headers: { 'Content-Type': 'application/json', authorization: 'Bearer abc', 'X-Hub-Signature-256': 'sha256=ff', 'x-empty': '' },
      }).headers;
      expect({ ...headers }).toEqual({
        'content-type': 'application/json',
        authorization: 'Bearer abc',
        'x-hub-signature-256': 'sha256=ff',
        'x-empty': '',
      });
    });

    it('spec 4.6: raw header pairs give exactly what Node puts in req.headers (repeats joined the same way)', async () => {
      let captured: http.IncomingMessage | undefined;
      const server = http.createServer((req, res) => {
        captured = req;
        req.resume();
        req.on('end', () => res.end());
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const { port } = server.address() as AddressInfo;
      const rawRequest = [
        'POST /hook HTTP/1.1',
        `Host: 127.0.0.1:${port}`,
        'X-Dup: one',
        'x-dup: two',
        'Cookie: a=1',
        'Cookie: b=2',
        'Set-Cookie: s=1',
        'Set-Cookie: t=2',
        'Authorization: Bearer first',
        'Authorization: Bearer second',
        'Content-Type: application/json',
        'Content-Type: text/plain',
        'User-Agent: ua-1',
        'X-Spaces:    padded value   ',
        'Content-Length: 2',
        'Connection: close',
        '',
        '{}',
      ].join('\r\n');
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => socket.end(rawRequest));
        socket.on('data', () => undefined).on('close', () => resolve()).on('error', reject);
      });
      await new Promise<void>((resolve) => server.close(() => resolve()));
      const req = captured as http.IncomingMessage;

      const fromRaw = build({ headers: req.rawHeaders }).headers;
      expect({ ...fromRaw }).toEqual({ ...req.headers });
      expect({ ...build({ headers: req.headers }).headers }).toEqual({ ...req.headers });
      expect(fromRaw['x-dup']).toBe('one, two');
      expect(fromRaw.cookie).toBe('a=1; b=2');
      expect(fromRaw['set-cookie']).toEqual(['s=1', 't=2']);
      expect(fromRaw.authorization).toBe('Bearer first');
      // Name/value tuples are accepted too.
      const pairs = [['X-A', '1'], ['x-a', '2']] as const;
      expect({ ...build({ headers: pairs }).headers }).toEqual({ 'x-a': '1, 2' });
    });

    it('spec 4.6: header names like __proto__ stay ordinary keys', () => {
      const headers = build({ headers: ['__proto__', 'x', 'constructor', 'y'] }).headers;
      expect(Object.keys(headers)).toEqual(['__proto__', 'constructor']);
      expect(JSON.stringify(headers)).toBe('{"__proto__":"x","constructor":"y"}');
    });
  });

  describe('body', () => {
    it('spec 4.6: JSON is parsed whatever the content-type says', () => {
      const webhook = build({ headers: { 'content-type': 'text/plain' }, rawBody: Buffer.from('{"event":"push","n":[1,2]}') });
      expect(webhook.body).toEqual({ event: 'push', n: [1, 2] });
      expect(body('42').body).toBe(42);
      expect(body('"text"').body).toBe('text');
      expect(body('[1,{"a":null}]').body).toEqual([1, { a: null }]);
      expect(body(' \n {"a":1} \n').body).toEqual({ a: 1 });
    });

    it('spec 4.6: body is null when empty or not JSON, and rawBody keeps the text', () => {
      for (const raw of ['', '   \r\n', 'hello', 'a=1&b=2', '{"a":1', '{a:1}', "{'a':1}", 'NaN', '<xml/>']) {
        const webhook = body(raw);
        expect(webhook.body, raw).toBeNull();
        expect(webhook.rawBody).toBe(raw);
        expect(webhook.rawBodyEncoding).toBe('utf8');
      }
      expect(body('null').body).toBeNull();
    });

    it('spec 4.6: non-UTF-8 bytes are base64 and never parsed', () => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
      const webhook = body(png);
      expect(webhook.rawBodyEncoding).toBe('base64');
      expect(Buffer.from(webhook.rawBody, 'base64').equals(png)).toBe(true);
      expect(webhook.body).toBeNull();
      // JSON-looking text with one invalid byte (a lone 0xFF, an overlong encoding, a lone surrogate)
      for (const bad of [[0xff], [0xc0, 0xaf], [0xed, 0xa0, 0x80]]) {
        const bytes = Buffer.concat([Buffer.from('{"a":"'), Buffer.from(bad), Buffer.from('"}')]);
        const result = body(bytes);
        expect(result.rawBodyEncoding).toBe('base64');
        expect(result.body).toBeNull();
        expect(Buffer.from(result.rawBody, 'base64').equals(bytes)).toBe(true);
      }
    });

    it('spec 4.6: rawBody is the exact bytes: multi-byte text and a leading BOM survive', () => {
      const text = '{"name":"Zoë 🚀 ✓"}';
      const webhook = body(text);
      expect(webhook.rawBody).toBe(text);
      expect(Buffer.from(webhook.rawBody, 'utf8').equals(Buffer.from(text))).toBe(true);
      const withBom = Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('{"a":1}')]);
      const bom = body(withBom);
      expect(bom.rawBodyEncoding).toBe('utf8');
      expect(Buffer.from(bom.rawBody, 'utf8').equals(withBom)).toBe(true);
      expect(bom.body).toEqual({ a: 1 });
    });

    it('spec 4.6: a JSON body cannot pollute prototypes and keeps its __proto__/constructor keys', () => {
      const raw = '{"__proto__":{"polluted":true},"constructor":{"prototype":{"polluted":true}},"a":1}';
      const webhook = body(raw);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.prototype.hasOwnProperty.call(webhook.body, '__proto__')).toBe(true);
      expect((webhook.body as Record<string, unknown>).polluted).toBeUndefined();
      expect(JSON.stringify(webhook.body)).toBe(raw);
      const stored = redactForStorage(webhook);
      expect(JSON.stringify(stored.body)).toBe(raw);
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    });

    it('spec 8.4: nesting beyond MAX_JSON_DEPTH is not carried as body, without throwing', () => {
      const nested = (n: number) => '['.repeat(n) + ']'.repeat(n);
      expect(body(nested(MAX_JSON_DEPTH)).body).not.toBeNull();
      expect(body(nested(MAX_JSON_DEPTH + 1)).body).toBeNull();
      const hostile = nested(500_000); // just under 1 MiB, far too deep for recursion
      const webhook = body(hostile);
      expect(webhook.body).toBeNull();
      expect(webhook.rawBody).toHaveLength(1_000_000);
      expect(() => JSON.stringify(redactForStorage(webhook))).not.toThrow();
    });
  });
});

describe('stored input snapshot (spec 4.6 redaction)', () => {
  const webhook = build({
    rawUrl: '/hook?code=abc',
    headers: {
      authorization: 'Bearer secret',
      'proxy-authorization': 'Basic xyz',
      cookie: 'session=1',
      'set-cookie': ['a=1', 'b=2'],
      'x-api-key': 'k',
      'stripe-signature': 't=1,v1=ff',
      'x-webhook-secret': 's',
      'x-gitlab-token': 't',
      'webhook-signature': 'v1,abc',
      'content-type': 'application/json',
      'x-signature-version': '2',
      'x-token-id': 'id-1',
      signature: 'bare',
      'user-agent': 'GitHub-Hookshot/1',
    },
    rawBody: Buffer.from('{"event":"push"}'),
  });

  it('spec 4.6: secret header values are masked, names and other headers kept', () => {
    const stored = redactForStorage(webhook);
    expect({ ...stored.headers }).toEqual({
      authorization: '[REDACTED]',
      'proxy-authorization': '[REDACTED]',
      cookie: '[REDACTED]',
      'set-cookie': '[REDACTED]',
      'x-api-key': '[REDACTED]',
      'stripe-signature': '[REDACTED]',
      'x-webhook-secret': '[REDACTED]',
      'x-gitlab-token': '[REDACTED]',
      'webhook-signature': '[REDACTED]',
      'content-type': 'application/json',
      'x-signature-version': '2',
      'x-token-id': 'id-1',
      signature: 'bare',
      'user-agent': 'GitHub-Hookshot/1',
    });
  });

  it('spec 4.6: rawBody is not stored; the rest of the object is', () => {
    const stored = redactForStorage(webhook);
    expect('rawBody' in stored).toBe(false);
    expect(stored).toMatchObject({ method: 'POST', body: { event: 'push' }, rawBodyEncoding: 'utf8', receivedAt: webhook.receivedAt });
    expect({ ...stored.query }).toEqual({ code: 'abc' });
  });

  it('spec 4.6: the task still receives everything verbatim', () => {
    redactForStorage(webhook);
    expect(webhook.headers.authorization).toBe('Bearer secret');
    expect(webhook.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(webhook.rawBody).toBe('{"event":"push"}');
  });

  it('spec 4.6: masking matches names case-insensitively', () => {
    for (const name of ['Authorization', 'X-API-KEY', 'X-Slack-Signature', 'X-Shared-SECRET', 'X-Auth-Token']) {
      expect(isSecretHeader(name), name).toBe(true);
    }
    for (const name of ['x-signature', 'x-tokens', 'secretive', 'x-api-keys', 'accept']) {
      expect(isSecretHeader(name), name).toBe(name === 'x-signature');
    }
  });

  it('spec 2.2: NUL characters in keys and values are made visible in the snapshot only', () => {
    const withNul = build({
      rawUrl: '/hook?a%00b=c%00d',
      rawBody: Buffer.from(JSON.stringify({ 'k\u0000': ['v\u0000', { deep: 'x\u0000y' }], clean: 'ok' })),
    });
    const stored = redactForStorage(withNul);
    expect(containsNul(stored)).toBe(false);
    expect({ ...stored.query }).toEqual({ 'a\\u0000b': 'c\\u0000d' });
    expect(stored.body).toEqual({ 'k\\u0000': ['v\\u0000', { deep: 'x\\u0000y' }], clean: 'ok' });
    // The task's copy is untouched.
    expect(withNul.query['a\u0000b']).toBe('c\u0000d');
    expect(withNul.body).toEqual({ 'k\u0000': ['v\u0000', { deep: 'x\u0000y' }], clean: 'ok' });
    expect(withNul.rawBody).toContain('\\u0000');
  });
});

describe('jsonb storage (spec 2.2 input snapshot)', () => {
  const db = new PGlite();
  afterAll(() => db.close());

  it('spec 2.2: PostgreSQL jsonb refuses NUL, and accepts the redacted snapshot', async () => {
    const webhook = build({ rawUrl: '/hook?a=%00', rawBody: Buffer.from('{"s":"\\u0000","__proto__":{"k":1}}') });
    await expect(db.query('select $1::jsonb as v', [JSON.stringify({ webhook })])).rejects.toThrow(/\\u0000|unsupported/i);
    const stored = redactForStorage(webhook);
    const { rows } = await db.query<{ v: unknown }>('select $1::jsonb as v', [JSON.stringify({ webhook: stored })]);
    expect(JSON.stringify(rows[0]?.v)).toContain('"__proto__"');
    expect(rows[0]?.v).toMatchObject({ webhook: { body: { s: '\\u0000' }, query: { a: '\\u0000' } } });
  });
});
