// Spec 4.10 OAuth connections: a (nearly) expired access token is refreshed with the refresh_token grant against a
// real token endpoint, once per connection however many resolve at once (and across instances on PostgreSQL);
// a refusal is 502 without any secret or provider text.
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { connectionSecretAt } from '../../src/agents/connections-repo.ts';
import { credentialsToken, readSecret, seedConnection } from './connections.ts';
import { FakeOAuthServer } from './fake-oauth-server.ts';

let t: TestApp;
let a: SeededAgent;
let token: string;
let provider: FakeOAuthServer;

beforeAll(async () => {
  provider = await new FakeOAuthServer().start();
  // The fake provider listens on plain http on loopback: allowed only because the operator lists it.
  t = await createTestApp({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  a = await seedAgent(t);
  token = await credentialsToken(t, a.agent, 9);
});
afterAll(async () => {
  await t?.close();
  await provider?.stop();
});
afterEach(() => {
  provider.calls.length = 0;
  provider.behaviour = { kind: 'ok', rotate: true, expiresIn: 3600 };
  provider.gate = null;
});

function oauthSecret(extra: Record<string, unknown> = {}) {
  return {
    access_token: 'stale-access-token',
    refresh_token: 'original-refresh-token',
    token_url: provider.tokenUrl,
    client_id: 'client-abc',
    client_secret: 'client-secret-xyz',
    ...extra,
  };
}

const expired = () => new Date(Date.now() - 5 * 60_000);

function resolveWith(app: TestApp['app'], id: string) {
  return app.inject({ method: 'GET', url: `/api/credentials/${id}/resolve`, headers: { ...a.agentAuth, 'x-credentials-token': token } });
}

/** Fires `n` resolves while the provider holds its answer, then releases it once the first call has arrived. */
async function concurrentResolves(apps: TestApp['app'][], id: string, n: number) {
  const release = provider.hold();
  const pending = Array.from({ length: n }, (_, i) => resolveWith(apps[i % apps.length]!, id));
  while (provider.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
  // Give every other request ample room to reach the provider if the single-flight did not hold.
  await new Promise((r) => setTimeout(r, 300));
  release();
  return Promise.all(pending);
}

describe('spec 4.10: OAuth refresh', () => {
  it('spec 4.10: an expired token is refreshed ONCE for 20 concurrent resolves; all get the new token; the rotated refresh token is stored', async () => {
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired(), extras: { team: 'x' } });
    const results = await concurrentResolves([t.app], id, 20);
    expect(provider.calls).toHaveLength(1);
    for (const res of results) {
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ type: 'oauth', access_token: expect.stringMatching(/^fresh-access-/) });
    }
    const tokens = new Set(results.map((r) => r.json().access_token));
    expect(tokens.size).toBe(1);
    const body = results[0]!.json();
    expect(body.extras).toMatchObject({ token_type: 'bearer', team: 'x' });
    expect(Date.parse(body.extras.expires_at)).toBeGreaterThan(Date.now() + 3_000_000);

    const call = provider.calls[0]!;
    expect(call.params.get('grant_type')).toBe('refresh_token');
    expect(call.params.get('refresh_token')).toBe('original-refresh-token');
    expect(call.params.get('client_id')).toBe('client-abc');
    expect(call.params.get('client_secret')).toBe('client-secret-xyz'); // client_secret_post by default

    const stored = await readSecret<Record<string, string>>(t, id);
    expect(stored.secret.access_token).toBe([...tokens][0]);
    expect(stored.secret.refresh_token).toMatch(/^rotated-refresh-/);
    expect(stored.secret.client_secret).toBe('client-secret-xyz');
    expect(stored.expiresAt!.getTime()).toBe(Date.parse(body.extras.expires_at));

    // The next resolve uses the stored token: no second provider call.
    const again = await resolveWith(t.app, id);
    expect(again.json().access_token).toBe([...tokens][0]);
    expect(provider.calls).toHaveLength(1);
  });

  it('spec 4.10: a token expiring within 60 s is refreshed; one valid for 10 minutes is not', async () => {
    const soon = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: new Date(Date.now() + 30_000) });
    const later = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: new Date(Date.now() + 600_000) });
    expect((await resolveWith(t.app, later)).json().access_token).toBe('stale-access-token');
    expect(provider.calls).toHaveLength(0);
    expect((await resolveWith(t.app, soon)).json().access_token).toMatch(/^fresh-access-/);
    expect(provider.calls).toHaveLength(1);
  });

  it('spec 4.10: a provider that does not rotate keeps the stored refresh token; no expires_in means no known expiry', async () => {
    provider.behaviour = { kind: 'ok', rotate: false, expiresIn: null, scope: 'read' };
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    const res = await resolveWith(t.app, id);
    expect(res.statusCode).toBe(200);
    expect(res.json().extras).toEqual({ token_type: 'bearer', scope: 'read' });
    const stored = await readSecret<Record<string, string>>(t, id);
    expect(stored.secret.refresh_token).toBe('original-refresh-token');
    expect(stored.expiresAt).toBeNull();
  });

  it('spec 4.10: client_secret_basic when the connection asks for it', async () => {
    const id = await seedConnection(t, a.agent.id, {
      type: 'oauth',
      secret: oauthSecret({ token_endpoint_auth_method: 'client_secret_basic' }),
      expiresAt: expired(),
    });
    expect((await resolveWith(t.app, id)).statusCode).toBe(200);
    const call = provider.calls[0]!;
    // RFC 6749 §2.3.1: id and secret are form-urlencoded before base64 (oauth4webapi encodes '-' too).
    const [scheme, b64] = String(call.headers.authorization).split(' ');
    expect(scheme).toBe('Basic');
    const [user, pass] = Buffer.from(b64!, 'base64').toString('utf8').split(':').map(decodeURIComponent);
    expect([user, pass]).toEqual(['client-abc', 'client-secret-xyz']);
    expect(call.params.get('client_secret')).toBeNull();
  });

  it('spec 4.10: an ID token in the refresh answer (OIDC providers) does not fail the refresh', async () => {
    provider.behaviour = { kind: 'ok', rotate: true, expiresIn: 3600, idToken: 'eyJhbGciOiJub25lIn0.eyJpc3MiOiJodHRwczovL290aGVyIn0.' };
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    const res = await resolveWith(t.app, id);
    expect(res.statusCode).toBe(200);
    expect(res.json().access_token).toMatch(/^fresh-access-/);
  });

  it.each([
    ['400 invalid_grant', { kind: 'invalid_grant' as const }],
    ['a 5xx', { kind: 'server_error' as const }],
    ['a dropped connection', { kind: 'drop' as const }],
  ])('spec part 7: %s from the provider → 502 upstream_failed, no secret or provider text anywhere', async (_name, behaviour) => {
    provider.behaviour = behaviour;
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    const res = await resolveWith(t.app, id);
    expect(res.statusCode).toBe(502);
    expect(res.json()).toEqual({ error: expect.any(String), code: 'upstream_failed', requestId: expect.any(String) });
    const secrets = ['stale-access-token', 'original-refresh-token', 'client-secret-xyz', provider.refusalMarker, 'invalid_grant', token, a.agentKey];
    for (const s of secrets) expect(res.body).not.toContain(s);
    const logs = t.logs.join('\n');
    for (const s of secrets.filter((x) => x !== 'invalid_grant')) expect(logs).not.toContain(s);
    // Nothing was written: the stored token and refresh token are unchanged.
    const stored = await readSecret<Record<string, string>>(t, id);
    expect(stored.secret).toMatchObject({ access_token: 'stale-access-token', refresh_token: 'original-refresh-token' });
  });

  it('spec part 7: concurrent resolves that join one refused refresh all get 502, after one provider call', async () => {
    provider.behaviour = { kind: 'invalid_grant' };
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    const results = await concurrentResolves([t.app], id, 5);
    expect(results.map((r) => r.statusCode)).toEqual([502, 502, 502, 502, 502]);
    expect(provider.calls).toHaveLength(1);
  });

  it('decisions: a plain-http token URL off the operator allow-list is never called (502)', async () => {
    const strict = await createTestApp();
    try {
      const x = await seedAgent(strict);
      const id = await seedConnection(strict, x.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
      const tok = await credentialsToken(strict, x.agent);
      const res = await strict.app.inject({ method: 'GET', url: `/api/credentials/${id}/resolve`, headers: { ...x.agentAuth, 'x-credentials-token': tok } });
      expect(res.statusCode).toBe(502);
      expect(provider.calls).toHaveLength(0);
    } finally {
      await strict.close();
    }
  });

  it('decisions "One way per job": a token URL reaching loopback, private or metadata addresses off the allow-list is refused by the guarded client (502), no connection made', async () => {
    const strict = await createTestApp();
    try {
      const x = await seedAgent(strict);
      const tok = await credentialsToken(strict, x.agent);
      const port = new URL(provider.tokenUrl).port;
      const connectionsBefore = provider.connections;
      const tokenUrls = [
        `https://127.0.0.1:${port}/oauth/token`, // https passes the scheme rule; the address guard refuses it
        `https://localhost:${port}/oauth/token`, // refused on the resolved address
        'https://10.0.0.1/oauth/token',
        'https://169.254.169.254/oauth/token',
      ];
      for (const tokenUrl of tokenUrls) {
        const id = await seedConnection(strict, x.agent.id, { type: 'oauth', secret: oauthSecret({ token_url: tokenUrl }), expiresAt: expired() });
        const res = await strict.app.inject({ method: 'GET', url: `/api/credentials/${id}/resolve`, headers: { ...x.agentAuth, 'x-credentials-token': tok } });
        expect(res.statusCode, tokenUrl).toBe(502);
        expect(res.json(), tokenUrl).toMatchObject({ code: 'upstream_failed' });
      }
      expect(provider.connections).toBe(connectionsBefore);
      expect(provider.calls).toHaveLength(0);
      expect(strict.logs.join('\n').match(/"kind":"ARS_OUTBOUND_BLOCKED"/g)).toHaveLength(tokenUrls.length);
    } finally {
      await strict.close();
    }
  });

  it('issue 11 (bounded waits): no transaction, row lock or pooled connection is held while the provider is called', async () => {
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    const release = provider.hold();
    const pending = resolveWith(t.app, id);
    try {
      while (provider.calls.length === 0) await new Promise((r) => setTimeout(r, 5));
      // A row lock held through the call would make NOWAIT fail at once (55P03).
      await t.db.transaction((tx) => tx.query('SELECT id FROM connections WHERE id = $1 FOR UPDATE NOWAIT', [id]));
      if (onPostgres) {
        const { rows } = await t.db.query<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
        );
        expect(rows[0]!.n).toBe(0);
      }
      // The claim is visible instead: a lease running for about the provider timeout and a margin.
      const { rows } = await t.db.query<{ lease_ms: number }>(
        'SELECT extract(epoch FROM refresh_lease_until - now()) * 1000 AS lease_ms FROM connections WHERE id = $1',
        [id],
      );
      expect(Number(rows[0]!.lease_ms)).toBeGreaterThan(5_000);
    } finally {
      release();
    }
    expect((await pending).statusCode).toBe(200);
    const { rows } = await t.db.query('SELECT refresh_lease, refresh_lease_until FROM connections WHERE id = $1', [id]);
    expect(rows[0]).toEqual({ refresh_lease: null, refresh_lease_until: null });
  });

  it('issue 11: a claim left by a crashed instance runs out; the next resolve refreshes', async () => {
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    await t.db.query("UPDATE connections SET refresh_lease = gen_random_uuid(), refresh_lease_until = now() - interval '1 second' WHERE id = $1", [id]);
    const res = await resolveWith(t.app, id);
    expect(res.statusCode).toBe(200);
    expect(res.json().access_token).toMatch(/^fresh-access-/);
    expect(provider.calls).toHaveLength(1);
  });

  it('issue 11: while another instance holds the claim, a resolve waits for its token instead of calling the provider', async () => {
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    await t.db.query("UPDATE connections SET refresh_lease = gen_random_uuid(), refresh_lease_until = now() + interval '1 minute' WHERE id = $1", [id]);
    const pending = resolveWith(t.app, id);
    await new Promise((r) => setTimeout(r, 300));
    // The other instance stores its token and ends its claim.
    const fresh = t.ctx.secrets.sealJson(oauthSecret({ access_token: 'stored-by-the-other-instance' }), connectionSecretAt(id));
    await t.db.query(
      "UPDATE connections SET secret_enc = $2, token_expires_at = now() + interval '1 hour', refresh_lease = NULL, refresh_lease_until = NULL WHERE id = $1",
      [id, fresh],
    );
    const res = await pending;
    expect(res.statusCode).toBe(200);
    expect(res.json().access_token).toBe('stored-by-the-other-instance');
    expect(provider.calls).toHaveLength(0);
  });

  it.skipIf(!onPostgres)('spec 4.10 / decisions "Scale-out": two instances on one PostgreSQL refresh a connection once', async () => {
    const other = await t.another();
    const id = await seedConnection(t, a.agent.id, { type: 'oauth', secret: oauthSecret(), expiresAt: expired() });
    const results = await concurrentResolves([t.app, other.app], id, 20);
    expect(provider.calls).toHaveLength(1);
    expect(results.map((r) => r.statusCode)).toEqual(Array(20).fill(200));
    expect(new Set(results.map((r) => r.json().access_token)).size).toBe(1);
    const stored = await readSecret<Record<string, string>>(t, id);
    expect(stored.secret.refresh_token).toMatch(/^rotated-refresh-/);
  });
});
