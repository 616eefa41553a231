// Issue 38 item 6: the document says exactly what goes over the wire — typed path ids (a client generated from it
// passes the integer ids the service answers with), a template parameter name for the zone proxy's wildcard, and
// the headers handlers set themselves. Read from the committed docs/openapi.json, which openapi.test.ts holds equal
// to what the app serves; that every header a real answer carries is declared is checked by every suite
// (test/helpers/openapi-check.ts).
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, expectTypeOf, it } from 'vitest';
import type { paths } from '../../packages/sdk/src/index.ts';

type Json = Record<string, unknown>;
type Param = { in: string; name: string; schema: Json };
type Operation = { operationId: string; parameters?: Param[]; responses: Record<string, { headers?: Json }> };

const DOC = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../docs/openapi.json'), 'utf8')) as {
  paths: Record<string, Record<string, Operation>>;
  components: { headers: Record<string, Json> };
};
const operations = Object.entries(DOC.paths).flatMap(([p, item]) => Object.entries(item).map(([m, op]) => ({ path: p, method: m, op })));
const INTEGER = { type: 'integer', minimum: 1 };
const UUID = { type: 'string', format: 'uuid' };

describe('issue 38 item 6: path ids', () => {
  it('every id in a path is an integer (agents, runs, runtimes, deliveries) or a UUID (orgs, users, tokens, connections, actions)', () => {
    const ids = operations.flatMap(({ path: p, op }) => (op.parameters ?? []).filter((x) => x.in === 'path' && /^(id|\w+Id)$/.test(x.name)).map((x) => ({ p, x })));
    expect(ids.length).toBeGreaterThan(60);
    for (const { p, x } of ids) expect([INTEGER, UUID], `${p} ${x.name}`).toContainEqual(x.schema);
    const schemaOf = (p: string, name: string) => DOC.paths[p]!.get?.parameters?.find((x) => x.name === name)?.schema ?? DOC.paths[p]!.post!.parameters!.find((x) => x.name === name)!.schema;
    expect(schemaOf('/api/admin/runs/{runId}', 'runId')).toEqual(INTEGER);
    expect(schemaOf('/api/admin/agents/{id}', 'id')).toEqual(INTEGER);
    expect(schemaOf('/api/admin/orgs/{id}', 'id')).toEqual(UUID);
    expect(schemaOf('/api/credentials/{connectionId}/resolve', 'connectionId')).toEqual(UUID);
  });

  it('the SDK\'s generated `paths` takes a number where the service answers one (openapi-fetch: no TS2322)', () => {
    expectTypeOf<paths['/api/admin/runs/{runId}']['get']['parameters']['path']['runId']>().toEqualTypeOf<number>();
    expectTypeOf<paths['/api/agents/{agentId}/runs/trigger']['post']['parameters']['path']['agentId']>().toEqualTypeOf<number>();
    expectTypeOf<paths['/api/admin/users/{id}']['get']['parameters']['path']['id']>().toEqualTypeOf<string>();
  });

  it('the zone proxy\'s wildcard is {path}, a parameter every operation of its paths declares', () => {
    expect(Object.keys(DOC.paths).filter((p) => p.includes('{*}'))).toEqual([]);
    const proxy = operations.filter(({ path: p }) => p.endsWith('/{path}'));
    expect(proxy.length).toBe(14);
    for (const { op } of proxy) expect(op.parameters!.filter((x) => x.in === 'path').map((x) => x.name)).toContain('path');
  });
});

describe('issue 38 item 6: headers handlers set themselves', () => {
  it('Idempotent-Replayed on every answer of every operation that takes an Idempotency-Key, and only there', () => {
    const takesKey = operations.filter(({ op }) => (op.parameters ?? []).some((x) => x.in === 'header' && x.name === 'idempotency-key'));
    expect(takesKey.map(({ op }) => op.operationId).sort()).toEqual([
      'triggerAndDownload', 'triggerAndWait', 'triggerRun', 'zoneTriggerAndDownload', 'zoneTriggerAndWait', 'zoneTriggerRun',
    ].sort());
    for (const { op } of takesKey) {
      for (const [status, answer] of Object.entries(op.responses)) {
        if (status !== 'default') expect(answer.headers?.['idempotent-replayed'], `${op.operationId} ${status}`).toEqual({ $ref: '#/components/headers/IdempotentReplayed' });
      }
    }
    const others = operations.filter((o) => !takesKey.includes(o)).flatMap(({ op }) => Object.values(op.responses));
    expect(others.filter((answer) => answer.headers?.['idempotent-replayed'])).toEqual([]);
    expect(DOC.components.headers.IdempotentReplayed).toMatchObject({ schema: { type: 'string', enum: ['true'] } });
  });

  it('Set-Cookie on sign-out, Location on the proxy\'s 303, and the download\'s own headers', () => {
    expect(Object.keys(DOC.paths['/api/session']!.delete!.responses['204']!.headers!)).toContain('set-cookie');
    expect(DOC.paths['/zones/{agentId}/app/{path}']!.get!.responses['303']!.headers).toMatchObject({ location: { required: true } });
    const download = DOC.paths['/api/agents/{agentId}/runs/trigger-and-download']!.post!.responses['200']!.headers!;
    expect(Object.keys(download)).toEqual(expect.arrayContaining(['x-run-id', 'content-disposition', 'x-content-type-options', 'ratelimit-remaining', 'idempotent-replayed']));
  });
});
