// Issue 13 (items 1 and 7): the OpenAPI 3.1 document generated from the route schemas, served at /openapi.json and
// committed as docs/openapi.json, and the /docs page. That real answers match it is checked by every suite
// (test/helpers/openapi-check.ts); the last block shows that check failing where it must.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import Fastify, { type RouteOptions } from 'fastify';
import fastifySwagger from '@fastify/swagger';
import { Validator } from '@seriousme/openapi-schema-validator';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.ts';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { OpenApiChecker } from '../helpers/openapi-check.ts';

type Json = Record<string, unknown>;
type Operation = { operationId?: string; security?: unknown; responses: Record<string, Json>; requestBody?: Json };

const COMMITTED = path.resolve(import.meta.dirname, '../../docs/openapi.json');
const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch'];

let t: TestApp;
let doc: { openapi: string; paths: Record<string, Record<string, Operation>>; components: Json };
let text: string;
beforeAll(async () => {
  t = await createTestApp();
  const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
  expect(res.statusCode).toBe(200);
  text = res.body;
  doc = res.json();
});
afterAll(() => t.close());

function operations(): Array<[string, string, Operation]> {
  return Object.entries(doc.paths).flatMap(([p, item]) => METHODS.filter((m) => item[m]).map((m) => [p, m, item[m]!] as [string, string, Operation]));
}

describe('issue 13: GET /openapi.json', () => {
  it('is public and cacheable: no credential, Cache-Control and an ETag that answers 304', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/openapi.json' });
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['cache-control']).toBe('public, max-age=300');
    const again = await t.app.inject({ method: 'GET', url: '/openapi.json', headers: { 'if-none-match': String(res.headers.etag) } });
    expect(again.statusCode).toBe(304);
  });

  it('is a valid OpenAPI 3.1 document (a maintained validator says so)', async () => {
    expect(doc.openapi).toBe('3.1.0');
    const result = await new Validator().validate(structuredClone(doc));
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
  });

  it('is the committed docs/openapi.json, byte for byte (run `npm run openapi` after changing a route schema)', () => {
    expect(text).toBe(readFileSync(COMMITTED, 'utf8'));
  });

  it('lists every route the app registers, except the hidden ones (/openapi.json, /docs)', async () => {
    const routes: RouteOptions[] = [];
    const probe = await buildApp(t.ctx, { instrument: (app) => app.addHook('onRoute', (r) => void routes.push(r)) });
    await probe.close();
    const missing: string[] = [];
    for (const route of routes) {
      if (route.schema?.hide) continue;
      const methods = [route.method].flat().map((m) => m.toLowerCase());
      // Fastify's own HEAD twin of a GET route is described by the GET operation.
      if (methods.length === 1 && methods[0] === 'head' && routes.some((r) => r.url === route.url && [r.method].flat().includes('GET'))) continue;
      const p = route.url.replace(/:(\w+)/g, '{$1}').replace('*', '{path}');
      for (const m of methods) if (!doc.paths[p]?.[m]) missing.push(`${m.toUpperCase()} ${p}`);
    }
    expect(missing).toEqual([]);
    expect(routes.some((r) => r.url === '/api/agents/:agentId/runs/trigger')).toBe(true);
    expect(doc.paths['/openapi.json']).toBeUndefined();
    expect(Object.keys(doc.paths).filter((p) => p.startsWith('/docs'))).toEqual([]);
  });

  it('gives every operation a unique camelCase operationId, its security and at least one 4xx', () => {
    const ids = operations().map(([, , op]) => op.operationId);
    expect(ids.filter((id) => !/^[a-z][A-Za-z0-9]*$/.test(String(id)))).toEqual([]);
    expect(new Set(ids).size).toBe(ids.length);
    // The probes take nothing a caller could get wrong: no credential, no parameter, no body.
    const probes = ['/livez', '/readyz', '/healthz'];
    for (const [p, m, op] of operations()) {
      expect(Array.isArray(op.security), `${m} ${p} security`).toBe(true);
      if (!probes.includes(p)) expect(Object.keys(op.responses).some((s) => /^4(\d\d|XX)$/.test(s)), `${m} ${p} 4xx`).toBe(true);
    }
    expect(doc.paths['/api/agents/{agentId}/runs/trigger']!.post!.operationId).toBe('triggerRun');
    expect(doc.paths['/api/runs/{runId}/callback']!.post!.operationId).toBe('postCallback');
    expect(doc.paths['/api/credentials/{connectionId}/resolve']!.get!.security).toEqual([{ agentKey: [], credentialsToken: [] }]);
  });

  it('gives every request body and every answer with content a schema; shared shapes are named components', () => {
    for (const [p, m, op] of operations()) {
      const bodies = Object.values((op.requestBody?.content ?? {}) as Record<string, Json>);
      const answers = Object.values(op.responses).flatMap((r) => Object.values((r.content ?? {}) as Record<string, Json>));
      for (const media of [...bodies, ...answers]) expect(media.schema, `${m} ${p}`).toBeDefined();
    }
    const names = Object.keys(doc.components.schemas as Json);
    expect(names).toEqual(expect.arrayContaining(['Error', 'TriggerAccepted', 'SyncCompleted', 'SyncTimedOut', 'AdminRun', 'ResolvedCredential']));
    expect(names.filter((n) => !/^[A-Z][A-Za-z]+$/.test(n))).toEqual([]);
    // OpenAPI 3.1 says nullable as `type: [X, "null"]`; the 3.0 keyword would mislead a generator.
    expect(text).not.toContain('"nullable"');
  });

  it('spec part 7 / 8.1: errors are the Error component; 429 and 503 declare Retry-After, limited answers RateLimit-*', () => {
    const trigger = doc.paths['/api/agents/{agentId}/runs/trigger']!.post!;
    expect(trigger.responses['429']!.content).toEqual({ 'application/json': { schema: { $ref: '#/components/schemas/Error' } } });
    expect(Object.keys(trigger.responses['429']!.headers as Json)).toEqual(expect.arrayContaining(['retry-after', 'ratelimit-limit', 'x-request-id']));
    expect(Object.keys(trigger.responses['201']!.headers as Json)).toContain('ratelimit-remaining');
    expect(Object.keys(trigger.responses['503']!.headers as Json)).toContain('retry-after');
    const download = doc.paths['/api/agents/{agentId}/runs/trigger-and-download']!.post!.responses['200']!;
    expect(Object.keys(download.headers as Json)).toEqual(expect.arrayContaining(['content-disposition', 'x-run-id']));
  });
});

describe('issue 13: GET /docs', () => {
  it('answers an HTML page whose scripts and styles all come from this service', async () => {
    const res = await t.app.inject({ method: 'GET', url: '/docs' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/^text\/html/);
    const refs = [...res.body.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(refs.length).toBeGreaterThan(3);
    expect(refs.filter((r) => /^(https?:)?\/\//i.test(r))).toEqual([]);
    for (const ref of refs) {
      const asset = await t.app.inject({ method: 'GET', url: new URL(ref, 'http://local/docs').pathname });
      expect(asset.statusCode, ref).toBe(200);
    }
    // Its policy lets nothing load from elsewhere (no host names, no scheme-wide sources).
    const csp = String(res.headers['content-security-policy']);
    expect(csp).toContain("default-src 'none'");
    expect(csp.replace(/script-src [^;]+/, '')).not.toMatch(/https?:|\*/);
    // Issue 35: scripts only from Swagger UI's own folder on this service's origin, not 'self' (a zone app is 'self').
    const scripts = /script-src ([^;]+)/.exec(csp)![1]!.trim().split(/\s+/);
    expect(scripts).toContain(`${new URL(t.ctx.config.publicUrl).origin}/docs/static/`);
    expect(scripts.filter((src) => !/^http:\/\/localhost(:\d+)?\/docs\/static\/$/.test(src))).toEqual([]);
  });
});

describe('issue 13: the response check of the test apps', () => {
  async function checked() {
    const checker = new OpenApiChecker();
    const app = Fastify();
    checker.install(app);
    await app.register(fastifySwagger, { openapi: { openapi: '3.1.0', info: { title: 't', version: '1' } } });
    const ok = { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false };
    app.get<{ Querystring: { mode?: string } }>('/thing', { schema: { response: { 200: ok } } }, async (req, reply) => {
      if (req.query.mode === 'undeclared-status') return reply.code(201).send({ a: 'x' });
      if (req.query.mode === 'undeclared-shape') return reply.type('application/json').send('{"b":1}');
      // The serializer would drop `extra` and write null as "": what the handler gave is what is checked.
      if (req.query.mode === 'dropped-field') return { a: 'x', extra: 1 };
      if (req.query.mode === 'coerced-null') return { a: null };
      // Issue 38 item 6: a header of the API's vocabulary that the answer does not declare.
      if (req.query.mode === 'undeclared-header') return reply.header('idempotent-replayed', 'true').send({ a: 'x' });
      return { a: 'x' };
    });
    await app.ready();
    return { app, checker };
  }

  it('accepts an answer the document declares, and records a status or a shape it does not', async () => {
    const { app, checker } = await checked();
    await app.inject({ method: 'GET', url: '/thing' });
    expect(checker.violations).toEqual([]);
    for (const mode of ['undeclared-status', 'undeclared-shape', 'dropped-field', 'coerced-null', 'undeclared-header']) {
      await app.inject({ method: 'GET', url: `/thing?mode=${mode}` });
    }
    expect(checker.violations).toEqual([
      expect.stringContaining('status 201 is not declared'),
      expect.stringContaining('must have required property'),
      expect.stringContaining('must NOT have additional properties'),
      expect.stringContaining('/a must be string'),
      expect.stringContaining('header idempotent-replayed sent but not declared'),
    ]);
    await app.close();
  });
});
