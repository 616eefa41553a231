// decisions.md "Secrets at rest": no secret in a log line, an error body, the audit log or an admin answer. Here
// connections are created through the admin API (so the sealed JSON shape is the admin API's own) and then
// resolved, refreshed, refused and read back, and every place a secret could leak is scanned.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { credentialsToken, zoneToken } from './connections.ts';
import { FakeOAuthServer } from './fake-oauth-server.ts';

let t: TestApp;
let a: SeededAgent;
let provider: FakeOAuthServer;
let user: string;
const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
const SECRETS = {
  apiValue: 'sk_live_HYGIENE_api_value_0001',
  password: 'HYGIENE-password-0002',
  access: 'HYGIENE-access-token-0003',
  refresh: 'HYGIENE-refresh-token-0004',
  clientSecret: 'HYGIENE-client-secret-0005',
  refusedRefresh: 'HYGIENE-refused-refresh-0006',
};
const ids: Record<string, string> = {};

beforeAll(async () => {
  provider = await new FakeOAuthServer().start();
  t = await createTestApp({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  const orgId = await seedOrg(t);
  a = await seedAgent(t, { orgId });
  user = await seedUser(t, { orgId });
  const create = async (body: Record<string, unknown>) => {
    const res = await t.app.inject({ method: 'POST', url: `/api/admin/agents/${a.agent.id}/connections`, headers: admin, payload: body });
    expect(res.statusCode, res.body).toBe(201);
    for (const s of Object.values(SECRETS)) expect(res.body).not.toContain(s);
    return res.json().id as string;
  };
  const expired = Math.floor(Date.now() / 1000) - 600;
  ids.api = await create({ integration_id: 'stripe', type: 'api_key', value: SECRETS.apiValue, extras: { mode: 'live' } });
  ids.basic = await create({ integration_id: 'ftp', type: 'basic_auth', username: 'ftp-user', password: SECRETS.password });
  ids.oauth = await create({
    integration_id: 'google',
    type: 'oauth',
    access_token: SECRETS.access,
    refresh_token: SECRETS.refresh,
    expires_at: expired,
    token_url: provider.tokenUrl,
    client_id: 'client-1',
    client_secret: SECRETS.clientSecret,
    scope: 'drive',
    extras: { scope: 'drive.readonly' },
  });
  ids.refused = await create({
    integration_id: 'dropbox',
    type: 'oauth',
    access_token: 'HYGIENE-dead-access',
    refresh_token: SECRETS.refusedRefresh,
    expires_at: expired,
    token_url: provider.tokenUrl,
    client_id: 'client-2',
    client_secret: SECRETS.clientSecret,
  });
});
afterAll(async () => {
  await t?.close();
  await provider?.stop();
});

describe('decisions.md: secrets never leak', () => {
  const bodies: string[] = [];
  const issued: string[] = [];

  it('spec 4.10: connections made by the admin API resolve to the union (the sealed shape both sides agree on)', async () => {
    const tok = await credentialsToken(t, a.agent, 12);
    issued.push(tok);
    const resolve = (id: string) => t.app.inject({ method: 'GET', url: `/api/credentials/${id}/resolve`, headers: { ...a.agentAuth, 'x-credentials-token': tok } });
    expect((await resolve(ids.api!)).json()).toEqual({ type: 'api_key', value: SECRETS.apiValue, extras: { mode: 'live' } });
    expect((await resolve(ids.basic!)).json()).toEqual({ type: 'basic_auth', username: 'ftp-user', password: SECRETS.password, extras: {} });
    const oauth = (await resolve(ids.oauth!)).json();
    expect(oauth).toMatchObject({ type: 'oauth', access_token: 'fresh-access-1', extras: { token_type: 'bearer', scope: 'drive.readonly' } });
    issued.push(oauth.access_token, 'rotated-refresh-1');
    expect(provider.calls[0]!.params.get('refresh_token')).toBe(SECRETS.refresh);
    expect(provider.calls[0]!.params.get('client_secret')).toBe(SECRETS.clientSecret);

    provider.behaviour = { kind: 'invalid_grant' };
    const refused = await resolve(ids.refused!);
    expect(refused.statusCode).toBe(502);
    bodies.push(refused.body);
    // Error bodies of every failing kind, with secrets in the request.
    bodies.push((await t.app.inject({ method: 'GET', url: `/api/credentials/${ids.api}/resolve`, headers: { ...a.agentAuth, 'x-credentials-token': `${tok}x` } })).body);
    bodies.push((await t.app.inject({ method: 'GET', url: `/api/credentials/${ids.api}/resolve`, headers: { authorization: `Bearer ${SECRETS.apiValue}`, 'x-credentials-token': tok } })).body);
  });

  it('zones.md: zone resolution of the same connections', async () => {
    const zt = await zoneToken(t, a.agent, user);
    issued.push(zt);
    const res = await t.app.inject({ method: 'GET', url: `/api/zones/agents/${a.agent.id}/credentials/stripe`, headers: { authorization: `Bearer ${zt}` } });
    expect(res.json().value).toBe(SECRETS.apiValue);
    bodies.push((await t.app.inject({ method: 'GET', url: `/api/zones/agents/${a.agent.id}/credentials/dropbox`, headers: { authorization: `Bearer ${zt}` } })).body);
  });

  it('admin-api.md: admin reads show `_set` flags, never the secret (also after a refresh rotated the tokens)', async () => {
    const list = await t.app.inject({ method: 'GET', url: `/api/admin/agents/${a.agent.id}/connections`, headers: admin });
    expect(list.statusCode).toBe(200);
    const one = await t.app.inject({ method: 'GET', url: `/api/admin/connections/${ids.oauth}`, headers: admin });
    expect(one.statusCode).toBe(200);
    expect(one.json()).toMatchObject({ access_token_set: true, refresh_token_set: true, client_secret_set: true });
    for (const body of [list.body, one.body]) {
      for (const s of [...Object.values(SECRETS), ...issued]) expect(body).not.toContain(s);
    }
  });

  it('decisions.md: no secret in any error body, audit entry or log line', async () => {
    for (const body of bodies) for (const s of [...Object.values(SECRETS), ...issued, provider.refusalMarker]) expect(body).not.toContain(s);
    const audit = JSON.stringify((await t.db.query('SELECT * FROM audit_log')).rows);
    expect(audit).toContain('credentials.resolved');
    for (const s of [...Object.values(SECRETS), ...issued, a.agentKey]) expect(audit).not.toContain(s);
    const logs = t.logs.join('\n');
    expect(logs.length).toBeGreaterThan(0);
    for (const s of [...Object.values(SECRETS), ...issued, a.agentKey, ADMIN_TOKEN, provider.refusalMarker]) expect(logs).not.toContain(s);
  });
});
