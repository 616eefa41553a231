// Issue 14: the service serves its web console at / (src/routes/console.ts). Runs against a fixture build
// (ARS_CONSOLE_DIR), so it needs neither a browser nor `npm run console:build`, and against a missing one.
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { consoleCsp } from '../../src/routes/console.ts';

const FIXTURE = path.resolve(import.meta.dirname, '../fixtures/console-dist');
const PAGES = ['/', '/sign-in', '/runs', '/runs/42', '/review', '/agents', '/agents/7', '/dashboard', '/audit', '/admin', '/admin/orgs', '/zone-apps/7'];

let built: TestApp;
let missing: TestApp;
beforeAll(async () => {
  built = await createTestApp({ config: { consoleDir: FIXTURE } });
  missing = await createTestApp({ config: { consoleDir: path.join(FIXTURE, 'not-there') } });
});
afterAll(async () => {
  await built?.close();
  await missing?.close();
});

describe('issue 14: the console', () => {
  it.each(PAGES)('%s serves index.html, not cached, under the strict CSP', async (url) => {
    const res = await built.app.inject({ method: 'GET', url });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    expect(res.body).toContain('/assets/app-fixture1.js');
    expect(res.headers['cache-control']).toBe('no-cache');
    // Issue 35: the build's own tags carry this answer's nonce, and only a nonce admits a script (not 'self').
    const nonce = /<script nonce="([A-Za-z0-9+/=]+)" type="module"/.exec(res.body)?.[1];
    expect(nonce, res.body).toBeDefined();
    expect(res.headers['content-security-policy']).toBe(consoleCsp(nonce!));
    expect(res.headers['content-security-policy']).toContain(`script-src 'nonce-${nonce}';`);
    expect(res.headers['content-security-policy']).not.toMatch(/script-src[^;]*'self'/);
    expect(res.headers['content-security-policy']).toContain("frame-ancestors 'none'");
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect(res.headers['referrer-policy']).toBe('same-origin');
  });

  it('issue 35: every page answer has a fresh nonce, on every script and link tag of the build and nowhere else', async () => {
    const nonces = new Set<string>();
    for (let i = 0; i < 3; i++) {
      const res = await built.app.inject({ method: 'GET', url: '/runs' });
      const tags = [...res.body.matchAll(/<(script|link)\b[^>]*>/g)].map((m) => m[0]);
      expect(tags.length).toBeGreaterThan(0);
      const own = tags.map((tag) => /nonce="([^"]+)"/.exec(tag)?.[1]);
      expect(new Set(own).size, tags.join('\n')).toBe(1);
      nonces.add(own[0]!);
      expect(res.body.split('nonce="').length - 1).toBe(tags.length);
    }
    expect(nonces.size).toBe(3);
  });

  it('hashed assets are immutable for a year; an unknown asset or a path out of the build is not served', async () => {
    const res = await built.app.inject({ method: 'GET', url: '/assets/app-fixture1.js' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/javascript/);
    expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(res.headers['x-content-type-options']).toBe('nosniff');
    expect((await built.app.inject({ method: 'GET', url: '/assets/nope.js' })).statusCode).toBe(404);
    const escape = await built.app.inject({ method: 'GET', url: '/assets/..%2f..%2fpackage.json' });
    expect(escape.statusCode).toBeGreaterThanOrEqual(400); // refused (400/403/404), whichever layer sees it first
    expect(escape.statusCode).toBeLessThan(500);
    expect(escape.body).not.toContain('agent-run-service');
  });

  it('issue 40 item 8: an asset goes precompressed — brotli or gzip as the browser accepts, plain otherwise — and stays immutable', async () => {
    const plain = await built.app.inject({ method: 'GET', url: '/assets/app-fixture1.js' });
    const original = plain.rawPayload;
    for (const [accept, encoding, decode] of [
      ['gzip, deflate, br, zstd', 'br', brotliDecompressSync],
      ['gzip', 'gzip', gunzipSync],
    ] as const) {
      const res = await built.app.inject({ method: 'GET', url: '/assets/app-fixture1.js', headers: { 'accept-encoding': accept } });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-encoding'], accept).toBe(encoding);
      expect(res.headers.vary).toMatch(/accept-encoding/i);
      expect(res.headers['content-type']).toMatch(/javascript/);
      expect(res.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(decode(res.rawPayload).equals(original), accept).toBe(true);
    }
    const identity = await built.app.inject({ method: 'GET', url: '/assets/app-fixture1.js', headers: { 'accept-encoding': 'identity' } });
    expect(identity.headers['content-encoding']).toBeUndefined();
    expect(identity.rawPayload.equals(original)).toBe(true);
  });

  it('issue 40 item 6: a browser on an unknown page gets a 404 page with a way back, an API client the JSON error', async () => {
    const browser = { accept: 'text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8' };
    const page = await built.app.inject({ method: 'GET', url: '/nope?token=secret-in-query', headers: browser });
    expect(page.statusCode).toBe(404);
    expect(page.headers['content-type']).toMatch(/^text\/html/);
    expect(page.headers['content-security-policy']).toMatch(/default-src 'none'/);
    expect(page.body).toContain('href="/runs"');
    expect(page.body).not.toContain('secret-in-query');
    const client = await built.app.inject({ method: 'GET', url: '/nope' });
    expect(client.statusCode).toBe(404);
    expect(client.json()).toMatchObject({ code: 'not_found' });
    const api = await built.app.inject({ method: 'GET', url: '/api/nope', headers: browser });
    expect(api.json()).toMatchObject({ code: 'not_found' });
  });

  it('paths the console does not know stay 404', async () => {
    for (const url of ['/nope', '/runsx', '/index.html']) {
      expect((await built.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
    }
  });

  it('not built: pages and assets answer 503 saying how to build it', async () => {
    for (const url of ['/', '/runs/1', '/assets/app-fixture1.js']) {
      const res = await missing.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(503);
      expect(res.headers['content-type']).toMatch(/^text\/html/);
      expect(res.body).toContain('npm run console:build');
      expect(res.headers['content-security-policy']).toBe(consoleCsp(null));
      expect(res.headers['content-security-policy']).toContain("script-src 'none'");
    }
  });

  it('the API is unaffected: /api answers JSON, not the console, and the pages are not in the OpenAPI document', async () => {
    const runs = await built.app.inject({ method: 'GET', url: '/api/admin/runs', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(runs.statusCode).toBe(200);
    expect(runs.headers['content-type']).toMatch(/^application\/json/);
    expect(runs.headers['content-security-policy']).toBeUndefined();
    const unknown = await built.app.inject({ method: 'GET', url: '/api/admin/nope', headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(unknown.statusCode).toBe(404);
    expect(unknown.headers['content-type']).toMatch(/^application\/json/);
    const doc = (await built.app.inject({ method: 'GET', url: '/openapi.json' })).json() as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths).filter((p) => !p.startsWith('/api/') && !/^\/(livez|readyz|healthz|metrics|zones)/.test(p))).toEqual([]);
  });
});
