// admin-api.md (preamble): every admin call needs the admin bearer (401 otherwise); bad bodies are 400 naming the
// field and write nothing.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows } from '../helpers/fixtures.ts';
import { call, expectInvalid, newAgent, newOrg, type Method } from './admin-helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

const UUID = '00000000-0000-4000-8000-000000000000';
const ROUTES: Array<[Method, string]> = [
  ['POST', '/orgs'],
  ['GET', `/orgs/${UUID}`],
  ['POST', `/orgs/${UUID}/members`],
  ['DELETE', `/orgs/${UUID}/members/${UUID}`],
  ['POST', '/users'],
  ['GET', `/users/${UUID}`],
  ['POST', `/users/${UUID}/tokens`],
  ['DELETE', `/users/${UUID}/tokens/${UUID}`],
  ['POST', '/runtimes'],
  ['GET', '/runtimes/1'],
  ['PATCH', '/runtimes/1'],
  ['POST', '/agents'],
  ['GET', '/agents/1'],
  ['PATCH', '/agents/1'],
  ['POST', '/agents/1/keys/ingest/rotate'],
  ['POST', '/agents/1/webhook-token'],
  ['POST', '/agents/1/connections'],
  ['GET', '/agents/1/connections'],
  ['GET', `/connections/${UUID}`],
  ['PATCH', `/connections/${UUID}`],
  ['DELETE', `/connections/${UUID}`],
  ['POST', '/agents/1/webhook-actions'],
  ['GET', '/agents/1/webhook-actions'],
  ['DELETE', `/webhook-actions/${UUID}`],
  ['GET', '/runs'],
  ['GET', '/runs/1'],
  ['GET', '/audit'],
];

describe('admin auth', () => {
  it('admin-api.md: every admin call answers 401 without the admin token, with a wrong one, or with another scheme', async () => {
    const orgsBefore = await countRows(t, 'organizations');
    for (const [method, url] of ROUTES) {
      for (const headers of [{}, { authorization: 'Bearer wrong-token' }, { authorization: 'Basic YWRtaW46YWRtaW4=' }] as Array<Record<string, string>>) {
        const res = await call(t, method, url, method === 'GET' || method === 'DELETE' ? undefined : { name: 'x' }, headers);
        expect(res.statusCode, `${method} ${url}`).toBe(401);
        expect(res.json().code).toBe('unauthorized');
      }
    }
    expect(await countRows(t, 'organizations')).toBe(orgsBefore);
  });

  it("admin-api.md: an agent's own keys are not admin credentials", async () => {
    const agent = await newAgent(t);
    for (const key of [agent.ingest_api_key, agent.agent_api_key]) {
      const res = await call(t, 'GET', `/agents/${agent.id}`, undefined, { authorization: `Bearer ${key}` });
      expect(res.statusCode).toBe(401);
    }
  });
});

describe('admin bodies', () => {
  it('admin-api.md: malformed JSON is 400 invalid_json', async () => {
    const res = await call(t, 'POST', '/orgs', '{"name": ');
    expect(res.statusCode).toBe(400);
    expect(res.json().code).toBe('invalid_json');
  });

  it('admin-api.md: an unknown top-level field is 400 naming it, and nothing is written', async () => {
    const before = await countRows(t, 'organizations');
    expectInvalid(await call(t, 'POST', '/orgs', { name: 'Acme', colour: 'blue' }), 'body.colour');
    expect(await countRows(t, 'organizations')).toBe(before);
  });

  it('admin-api.md: a missing body on a create names the first required field', async () => {
    expectInvalid(await call(t, 'POST', '/orgs'), 'body.name');
  });

  it('admin-api.md: a wrong type is 400 naming the field', async () => {
    expectInvalid(await call(t, 'POST', '/orgs', { name: 42 }), 'body.name');
    expectInvalid(await call(t, 'POST', '/orgs', ['Acme']), 'body');
  });

  it('admin-api.md: NUL characters in a string, a nested value or a key are 400 naming where', async () => {
    expectInvalid(await call(t, 'POST', '/orgs', { name: 'Ac\u0000me' }), 'body.name');
    const agent = await newAgent(t);
    expectInvalid(await call(t, 'PATCH', `/agents/${agent.id}`, { default_input: { deep: ['ok', 'b\u0000d'] } }), 'body.default_input.deep.1');
    expectInvalid(await call(t, 'PATCH', `/agents/${agent.id}`, { default_input: { 'k\u0000': 1 } }), 'body.default_input');
  });

  it('admin-api.md: a lone UTF-16 surrogate in default_input (jsonb refuses it) is 400 naming where, and nothing is written', async () => {
    const orgId = await newOrg(t);
    const before = await countRows(t, 'agents');
    const create = await call(t, 'POST', '/agents', { org_id: orgId, name: 'Agent', managed_by: 'standalone', default_input: { s: 'x\ud800' } });
    expectInvalid(create, 'body.default_input.s');
    expect(create.json().error).toMatch(/unpaired UTF-16 surrogate/);
    expect(await countRows(t, 'agents')).toBe(before);
    const agent = await newAgent(t, { default_input: { keep: 1 } });
    expectInvalid(await call(t, 'PATCH', `/agents/${agent.id}`, { default_input: { list: ['\udc00'] } }), 'body.default_input.list.0');
    expect((await call(t, 'GET', `/agents/${agent.id}`)).json().default_input).toEqual({ keep: 1 });
  });

  it('admin-api.md: __proto__, constructor and prototype keys are 400 naming them, at the top or nested', async () => {
    const before = await countRows(t, 'organizations');
    expectInvalid(await call(t, 'POST', '/orgs', '{"name":"x","__proto__":{"polluted":true}}'), 'body.__proto__');
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(await countRows(t, 'organizations')).toBe(before);
    const agent = await newAgent(t);
    expectInvalid(await call(t, 'PATCH', `/agents/${agent.id}`, '{"default_input":{"a":{"__proto__":{"x":1}}}}'), 'body.default_input.a.__proto__');
    expectInvalid(await call(t, 'PATCH', `/agents/${agent.id}`, { default_input: { constructor: { prototype: {} } } }), 'body.default_input.constructor');
  });

  it('admin-api.md: huge strings are 400 naming the field', async () => {
    expectInvalid(await call(t, 'POST', '/orgs', { name: 'x'.repeat(100_000) }), 'body.name');
    const agent = await newAgent(t);
    expectInvalid(await call(t, 'PATCH', `/agents/${agent.id}`, { target: 'x'.repeat(5000) }), 'body.target');
    expectInvalid(await call(t, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'x', type: 'api_key', value: 'v'.repeat(20_000) }), 'body.value');
  });

  it('admin-api.md: absurd nesting (past MAX_JSON_DEPTH, 512) is 400, not a crash', async () => {
    const agent = await newAgent(t);
    for (const depth of [600, 100_000]) {
      const deep = '{"default_input":' + '{"a":'.repeat(depth) + '1' + '}'.repeat(depth) + '}';
      const res = await call(t, 'PATCH', `/agents/${agent.id}`, deep);
      expectInvalid(res, 'body.default_input');
      expect(res.json().error).toContain('nests deeper than 512 levels');
    }
  });
});
