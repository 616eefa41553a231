// admin-api.md "Runtimes" (runtimes.md): kind immutable, secrets sealed and shown only as `_set` flags.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows } from '../helpers/fixtures.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import { auditActions, call, expectInvalid, newOrg, ok } from './admin-helpers.ts';

let t: TestApp;
let orgId: string;
beforeAll(async () => {
  t = await createTestApp();
  orgId = await newOrg(t);
});
afterAll(() => t.close());

const API_KEY = 'n8n_api_key_SECRET_0123456789abcdef';
const ALERT = 'alert_secret_SECRET_0123456789abcdef';

describe('runtimes', () => {
  it('admin-api.md: POST /runtimes answers 201 with the runtime and _set flags, never the secrets', async () => {
    const body = await ok(t, 201, 'POST', '/runtimes', {
      org_id: orgId,
      name: 'Prod n8n',
      kind: 'workflow',
      base_url: 'https://n8n.example.test',
      api_key: API_KEY,
      alert_secret: ALERT,
    });
    expect(body).toEqual({
      id: expect.any(Number),
      org_id: orgId,
      name: 'Prod n8n',
      kind: 'workflow',
      base_url: 'https://n8n.example.test',
      api_key_set: true,
      alert_secret_set: true,
    });
    // Sealed at rest, readable by the service.
    const { rows } = await t.db.query<{ api_key_enc: string; alert_secret_enc: string }>('SELECT * FROM runtimes WHERE id = $1', [body.id]);
    expect(rows[0]!.api_key_enc).not.toContain(API_KEY);
    expect(t.ctx.secrets.open(rows[0]!.api_key_enc, sealedAt('runtimes', 'api_key_enc', body.id))).toBe(API_KEY);
    expect(t.ctx.secrets.open(rows[0]!.alert_secret_enc, sealedAt('runtimes', 'alert_secret_enc', body.id))).toBe(ALERT);
    const read = await ok(t, 200, 'GET', `/runtimes/${body.id}`);
    expect(read).toEqual(body);
    const seen = JSON.stringify([read, await auditActions(t)]) + t.logs.join('');
    expect(seen).not.toContain(API_KEY);
    expect(seen).not.toContain(ALERT);
  });

  it('admin-api.md: a task runtime without secrets shows the flags false', async () => {
    const body = await ok(t, 201, 'POST', '/runtimes', { org_id: orgId, name: 'Trigger', kind: 'task', base_url: 'http://localhost:3030' });
    expect(body).toMatchObject({ kind: 'task', api_key_set: false, alert_secret_set: false });
  });

  it('admin-api.md: PATCH /runtimes/{id} changes name, base_url and secrets (null clears) and answers 200', async () => {
    const { id } = await ok(t, 201, 'POST', '/runtimes', { org_id: orgId, name: 'a', kind: 'task', base_url: 'https://api.trigger.dev', api_key: 'tr_dev_1' });
    const body = await ok(t, 200, 'PATCH', `/runtimes/${id}`, { name: 'b', base_url: 'https://trigger.example.test/', api_key: null, alert_secret: 'whsec_x' });
    expect(body).toMatchObject({ id, name: 'b', kind: 'task', base_url: 'https://trigger.example.test/', api_key_set: false, alert_secret_set: true });
    expect(await ok(t, 200, 'PATCH', `/runtimes/${id}`, {})).toEqual(body);
    const audit = (await auditActions(t)).find((a) => a.action === 'runtime.updated' && a.details.runtime_id === id);
    expect(audit?.details.fields).toEqual(['alert_secret', 'api_key', 'base_url', 'name']);
  });

  it('admin-api.md: kind and org_id cannot be changed (400 naming the field)', async () => {
    const { id } = await ok(t, 201, 'POST', '/runtimes', { org_id: orgId, name: 'a', kind: 'task', base_url: 'https://api.trigger.dev' });
    expectInvalid(await call(t, 'PATCH', `/runtimes/${id}`, { kind: 'workflow' }), 'body.kind');
    expectInvalid(await call(t, 'PATCH', `/runtimes/${id}`, { org_id: await newOrg(t) }), 'body.org_id');
    expect((await ok(t, 200, 'GET', `/runtimes/${id}`)).kind).toBe('task');
  });

  it('admin-api.md: base_url must be an absolute http(s) URL', async () => {
    const before = await countRows(t, 'runtimes');
    for (const base_url of ['n8n.example.test', '/relative', 'ftp://n8n.example.test', 'javascript:alert(1)', 'https://user:pw@n8n.example.test', '']) {
      expectInvalid(await call(t, 'POST', '/runtimes', { org_id: orgId, name: 'a', kind: 'workflow', base_url }), 'body.base_url');
    }
    expect(await countRows(t, 'runtimes')).toBe(before);
    const { id } = await ok(t, 201, 'POST', '/runtimes', { org_id: orgId, name: 'a', kind: 'workflow', base_url: 'http://n8n:5678' });
    expectInvalid(await call(t, 'PATCH', `/runtimes/${id}`, { base_url: 'mailto:x@example.test' }), 'body.base_url');
  });

  it('admin-api.md: bad runtime bodies are 400 naming the field', async () => {
    const good = { org_id: orgId, name: 'a', kind: 'workflow', base_url: 'https://n8n.example.test' };
    expectInvalid(await call(t, 'POST', '/runtimes', { ...good, kind: 'lambda' }), 'body.kind');
    expectInvalid(await call(t, 'POST', '/runtimes', { ...good, org_id: 'acme' }), 'body.org_id');
    expectInvalid(await call(t, 'POST', '/runtimes', { ...good, api_key: 12 }), 'body.api_key');
    expectInvalid(await call(t, 'POST', '/runtimes', { ...good, api_key: 'k\u0000' }), 'body.api_key');
    expectInvalid(await call(t, 'POST', '/runtimes', { ...good, region: 'eu' }), 'body.region');
    const { name: _n, ...noName } = good;
    expectInvalid(await call(t, 'POST', '/runtimes', noName), 'body.name');
  });

  it('admin-api.md: unknown ids are 404 (org in the body, runtime in the path)', async () => {
    expect((await call(t, 'POST', '/runtimes', { org_id: '00000000-0000-4000-8000-000000000000', name: 'a', kind: 'task', base_url: 'https://x.test' })).statusCode).toBe(404);
    for (const id of ['999999', 'abc', '0', '-1', '1.5']) {
      expect((await call(t, 'GET', `/runtimes/${id}`)).statusCode).toBe(404);
      expect((await call(t, 'PATCH', `/runtimes/${id}`, { name: 'x' })).statusCode).toBe(404);
    }
  });
});
