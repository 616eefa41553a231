// admin-api.md "Connections" (spec 2.3, 4.10): three typed bodies, secrets sealed as JSON and never shown again,
// one active connection per integration and agent.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { countRows } from '../helpers/fixtures.ts';
import { activeConnectionIds, connectionSecretAt } from '../../src/agents/connections-repo.ts';
import { auditActions, call, expectInvalid, newAgent, ok } from './admin-helpers.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

async function stored(id: string) {
  const { rows } = await t.db.query<{ secret_enc: string; extras: unknown; token_expires_at: Date | null; active: boolean }>(
    'SELECT * FROM connections WHERE id = $1',
    [id],
  );
  const row = rows[0]!;
  return { ...row, secret: t.ctx.secrets.openJson<Record<string, unknown>>(row.secret_enc, connectionSecretAt(id)) };
}

const SECRETS = {
  value: 'sk_live_SECRET_api_key_value',
  password: 'SECRET_basic_password',
  access_token: 'ya29.SECRET_access_token',
  refresh_token: '1//SECRET_refresh_token',
  client_secret: 'SECRET_client_secret',
};

describe('POST /agents/{id}/connections', () => {
  it('admin-api.md: an api_key connection answers 201 {id, integration_id, type, active} and seals the value', async () => {
    const agent = await newAgent(t);
    const body = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, {
      integration_id: 'openai',
      type: 'api_key',
      value: SECRETS.value,
      extras: { org: 'org-1' },
    });
    expect(body).toEqual({ id: expect.stringMatching(/^[0-9a-f-]{36}$/), integration_id: 'openai', type: 'api_key', active: true });
    const row = await stored(body.id);
    expect(row.secret_enc).not.toContain(SECRETS.value);
    expect(row.secret).toEqual({ value: SECRETS.value });
    expect(row.extras).toEqual({ org: 'org-1' });
    // Spec 2.3: the active connection joins the connectionIds map.
    expect(await activeConnectionIds(t.db, agent.id)).toEqual({ openai: { integrationId: 'openai', connectionId: body.id } });
  });

  it('admin-api.md: basic_auth and oauth connections; oauth expires_at accepts ISO 8601 and epoch seconds', async () => {
    const agent = await newAgent(t);
    const basic = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'jira', type: 'basic_auth', username: 'bot', password: SECRETS.password });
    expect((await stored(basic.id)).secret).toEqual({ username: 'bot', password: SECRETS.password });

    const oauth = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, {
      integration_id: 'google',
      type: 'oauth',
      access_token: SECRETS.access_token,
      refresh_token: SECRETS.refresh_token,
      expires_at: '2030-01-02T03:04:05Z',
      token_url: 'https://oauth2.example.test/token',
      client_id: 'client-1',
      client_secret: SECRETS.client_secret,
      scope: 'drive.readonly',
      active: false,
    });
    expect(oauth).toMatchObject({ type: 'oauth', active: false });
    const row = await stored(oauth.id);
    expect(row.token_expires_at?.toISOString()).toBe('2030-01-02T03:04:05.000Z');
    expect(row.secret).toEqual({
      access_token: SECRETS.access_token,
      refresh_token: SECRETS.refresh_token,
      token_url: 'https://oauth2.example.test/token',
      client_id: 'client-1',
      client_secret: SECRETS.client_secret,
      scope: 'drive.readonly',
    });
    const epoch = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'slack', type: 'oauth', access_token: 'x', expires_at: 1_900_000_000 });
    expect((await stored(epoch.id)).token_expires_at?.toISOString()).toBe(new Date(1_900_000_000_000).toISOString());
  });

  it('admin-api.md: a second active connection for the same integration is 409; an inactive one is allowed', async () => {
    const agent = await newAgent(t);
    const first = { integration_id: 'github', type: 'api_key', value: 'ghp_1' };
    await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, first);
    const before = await countRows(t, 'connections');
    const res = await call(t, 'POST', `/agents/${agent.id}/connections`, { ...first, value: 'ghp_2' });
    expect(res.statusCode).toBe(409);
    expect(res.json().code).toBe('conflict');
    expect(await countRows(t, 'connections')).toBe(before);
    await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { ...first, value: 'ghp_3', active: false });
    // Another agent may use the same integration.
    await ok(t, 201, 'POST', `/agents/${(await newAgent(t)).id}/connections`, first);
  });

  it('admin-api.md: each type requires its own fields and refuses the others by name', async () => {
    const agent = await newAgent(t);
    const url = `/agents/${agent.id}/connections`;
    const before = await countRows(t, 'connections');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'api_key' }), 'body.value');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'basic_auth', username: 'u' }), 'body.password');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'oauth', refresh_token: 'r' }), 'body.access_token');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'api_key', value: 'v', password: 'p' }), 'body.password');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'basic_auth', username: 'u', password: 'p', scope: 's' }), 'body.scope');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'kerberos', value: 'v' }), 'body.type');
    expectInvalid(await call(t, 'POST', url, { type: 'api_key', value: 'v' }), 'body.integration_id');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'api_key', value: 'v', extras: 'x' }), 'body.extras');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'api_key', value: 'v', colour: 'x' }), 'body.colour');
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'api_key', value: 'v', extras: { k: 'a\u0000' } }), 'body.extras.k');
    expectInvalid(await call(t, 'POST', url, '{"integration_id":"a","type":"api_key","value":"v","extras":{"__proto__":{}}}'), 'body.extras.__proto__');
    for (const expires_at of ['tomorrow', '2030-01-02', 1_900_000_000_000, 1.5, -1, true, { at: 1 }]) {
      expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'oauth', access_token: 't', expires_at }), 'body.expires_at');
    }
    expectInvalid(await call(t, 'POST', url, { integration_id: 'a', type: 'oauth', access_token: 't', token_url: 'file:///etc/passwd' }), 'body.token_url');
    expect(await countRows(t, 'connections')).toBe(before);
    expect((await ok(t, 200, 'GET', url)).data).toEqual([]);
  });

  it('admin-api.md: an unknown agent is 404', async () => {
    for (const id of ['999999', 'abc']) {
      expect((await call(t, 'POST', `/agents/${id}/connections`, { integration_id: 'a', type: 'api_key', value: 'v' })).statusCode).toBe(404);
      expect((await call(t, 'GET', `/agents/${id}/connections`)).statusCode).toBe(404);
    }
  });
});

describe('PATCH, GET and DELETE /connections/{id}', () => {
  it('admin-api.md: PATCH changes active, extras and secret fields and answers the connection without secrets', async () => {
    const agent = await newAgent(t);
    const { id } = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, {
      integration_id: 'google',
      type: 'oauth',
      access_token: SECRETS.access_token,
      refresh_token: SECRETS.refresh_token,
      client_id: 'c1',
      expires_at: 1_900_000_000,
    });
    const body = await ok(t, 200, 'PATCH', `/connections/${id}`, {
      access_token: 'ya29.NEW_access',
      client_secret: SECRETS.client_secret,
      refresh_token: null,
      extras: { tenant: 't1' },
      active: false,
    });
    expect(body).toEqual({
      id,
      agent_id: agent.id,
      integration_id: 'google',
      type: 'oauth',
      active: false,
      extras: { tenant: 't1' },
      access_token_set: true,
      refresh_token_set: false,
      client_secret_set: true,
      token_url: null,
      client_id: 'c1',
      scope: null,
      expires_at: null, // a new access token without expires_at drops the stale expiry
      created_at: expect.any(String),
      updated_at: expect.any(String),
    });
    expect((await stored(id)).secret).toEqual({ access_token: 'ya29.NEW_access', client_id: 'c1', client_secret: SECRETS.client_secret });
    expect((await ok(t, 200, 'PATCH', `/connections/${id}`, { expires_at: '2031-05-06T07:08:09+02:00' })).expires_at).toBe('2031-05-06T05:08:09.000Z');
  });

  it('admin-api.md: reads never show secret values, and neither do the logs nor the audit log', async () => {
    const agent = await newAgent(t);
    await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'openai', type: 'api_key', value: SECRETS.value });
    const basic = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'jira', type: 'basic_auth', username: 'bot', password: SECRETS.password });
    await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, {
      integration_id: 'google',
      type: 'oauth',
      access_token: SECRETS.access_token,
      refresh_token: SECRETS.refresh_token,
      client_secret: SECRETS.client_secret,
    });
    await ok(t, 200, 'PATCH', `/connections/${basic.id}`, { password: SECRETS.password + '2' });
    const list = await ok(t, 200, 'GET', `/agents/${agent.id}/connections`);
    expect(list.data.map((c: { integration_id: string }) => c.integration_id)).toEqual(['google', 'jira', 'openai']);
    expect(list.data.find((c: { type: string }) => c.type === 'api_key')).toMatchObject({ value_set: true });
    const one = await ok(t, 200, 'GET', `/connections/${basic.id}`);
    expect(one).toMatchObject({ username: 'bot', password_set: true });
    const scanned = JSON.stringify([list, one, await auditActions(t, agent.id)]) + t.logs.join('');
    for (const secret of Object.values(SECRETS)) expect(scanned).not.toContain(secret);
  });

  it('admin-api.md: re-activating while another connection of the integration is active is 409', async () => {
    const agent = await newAgent(t);
    const url = `/agents/${agent.id}/connections`;
    const a = await ok(t, 201, 'POST', url, { integration_id: 'x', type: 'api_key', value: '1' });
    const b = await ok(t, 201, 'POST', url, { integration_id: 'x', type: 'api_key', value: '2', active: false });
    expect((await call(t, 'PATCH', `/connections/${b.id}`, { active: true })).statusCode).toBe(409);
    await ok(t, 200, 'PATCH', `/connections/${a.id}`, { active: false });
    expect((await ok(t, 200, 'PATCH', `/connections/${b.id}`, { active: true })).active).toBe(true);
    expect(await activeConnectionIds(t.db, agent.id)).toEqual({ x: { integrationId: 'x', connectionId: b.id } });
  });

  it('admin-api.md: PATCH refuses fields of another type, immutable fields and bad values by name', async () => {
    const agent = await newAgent(t);
    const { id } = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'x', type: 'api_key', value: '1' });
    expectInvalid(await call(t, 'PATCH', `/connections/${id}`, { password: 'p' }), 'body.password');
    expectInvalid(await call(t, 'PATCH', `/connections/${id}`, { value: null }), 'body.value');
    expectInvalid(await call(t, 'PATCH', `/connections/${id}`, { type: 'oauth' }), 'body.type');
    expectInvalid(await call(t, 'PATCH', `/connections/${id}`, { integration_id: 'y' }), 'body.integration_id');
    expectInvalid(await call(t, 'PATCH', `/connections/${id}`, { active: 'no' }), 'body.active');
    expect((await stored(id)).secret).toEqual({ value: '1' });
  });

  it('admin-api.md: DELETE answers 204 and the connection is gone; unknown or malformed ids are 404', async () => {
    const agent = await newAgent(t);
    const { id } = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'x', type: 'api_key', value: '1' });
    expect(await ok(t, 204, 'DELETE', `/connections/${id}`)).toBeNull();
    expect(await activeConnectionIds(t.db, agent.id)).toEqual({});
    for (const missing of [id, 'not-a-uuid', '12']) {
      expect((await call(t, 'DELETE', `/connections/${missing}`)).statusCode).toBe(404);
      expect((await call(t, 'GET', `/connections/${missing}`)).statusCode).toBe(404);
      expect((await call(t, 'PATCH', `/connections/${missing}`, { active: false })).statusCode).toBe(404);
    }
  });

  it('decisions.md audit: connection create, update and delete are audited without secret values', async () => {
    const agent = await newAgent(t);
    const { id } = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'x', type: 'api_key', value: SECRETS.value });
    await ok(t, 200, 'PATCH', `/connections/${id}`, { value: SECRETS.value + 'b', extras: { a: 1 } });
    await ok(t, 204, 'DELETE', `/connections/${id}`);
    const entries = (await auditActions(t, agent.id)).filter((e) => e.action.startsWith('connection.'));
    expect(entries.map((e) => [e.action, e.details])).toEqual([
      ['connection.deleted', { connection_id: id, integration_id: 'x', type: 'api_key' }],
      ['connection.updated', { connection_id: id, integration_id: 'x', fields: ['extras', 'value'], active: true }],
      ['connection.created', { connection_id: id, integration_id: 'x', type: 'api_key', active: true }],
    ]);
  });
});
