// Issue 14: admin writes name who did them (audit actor_user_id). Every audited admin write records the signed-in
// user on its audit entry: an org admin's agent, key, webhook token, connection, webhook action, cancel, replay and
// redelivery; a platform admin user's organizations, users, tokens, memberships and runtimes. The platform-admin
// token is nobody in particular: its writes say null. Read back through GET /api/admin/audit with the admin token.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { permissiveLimiter } from '../sync/sync-helpers.ts';
import { outboxFor, runTo, seedWebhookAction } from '../events/outbox-helpers.ts';
import { call, ok, type Json, type Method } from './admin-helpers.ts';

const trig = new TriggerDevFake();
let t: TestApp;
let org: string;
let seeded: SeededAgent; // org's platform agent on the Trigger.dev fake, for cancel, replay and redelivery
let orgAdminId: string;
let platformUserId: string;
const bearer: Record<'orgAdmin' | 'platform', Record<string, string>> = { orgAdmin: {}, platform: {} };

beforeAll(async () => {
  await trig.start();
  trig.registerTask('my-target');
  t = await createTestApp({ limiter: permissiveLimiter, config: { outboundAllowHosts: ['127.0.0.1'] } });
  org = await seedOrg(t, 'Ada’s org');
  seeded = await seedAgent(t, { orgId: org, runtime: { kind: 'task', baseUrl: trig.url, apiKey: trig.secretKey } });
  orgAdminId = await seedUser(t, { orgId: org, role: 'admin' });
  platformUserId = await seedUser(t, { platformAdmin: true });
  bearer.orgAdmin = { authorization: `Bearer ${(await ok(t, 201, 'POST', `/users/${orgAdminId}/tokens`, {})).token}` };
  bearer.platform = { authorization: `Bearer ${(await ok(t, 201, 'POST', `/users/${platformUserId}/tokens`, {})).token}` };
});
afterAll(async () => {
  await t?.close();
  await trig.stop();
});

/** A call as a signed-in user (personal token) expected to answer `status`. */
async function as(who: keyof typeof bearer, status: number, method: Method, url: string, payload?: unknown): Promise<Json> {
  const res = await call(t, method, url, payload, bearer[who]);
  if (res.statusCode !== status) throw new Error(`${method} ${url} answered ${res.statusCode}, expected ${status}: ${res.body}`);
  return res.body === '' ? {} : res.json();
}

/** The audit log as the admin token reads it, newest first. */
async function audit(): Promise<Json[]> {
  return (await ok(t, 200, 'GET', '/audit?limit=200')).data;
}

/** The entries with `action` whose details or ids match `where`; expects at least one. */
async function entries(action: string, where: (e: Json) => boolean): Promise<Json[]> {
  const found = (await audit()).filter((e) => e.action === action && where(e));
  expect(found, `no ${action} entry`).not.toHaveLength(0);
  return found;
}

const actorsOf = (found: Json[]) => [...new Set(found.map((e) => e.actor_user_id))];

describe('an org admin signed in with a personal token', () => {
  it('issue 14: agent create, edit (toggle, status, webhook token), key rotation and webhook token reveal name the org admin', async () => {
    const agent = await as('orgAdmin', 201, 'POST', '/agents', { org_id: org, name: 'Made by Ada', managed_by: 'standalone' });
    const byAgent = (e: Json) => e.agent_id === agent.id;
    await as('orgAdmin', 200, 'PATCH', `/agents/${agent.id}`, { allow_webhook_triggers: true, status: 'paused' });
    await as('orgAdmin', 200, 'POST', `/agents/${agent.id}/keys/ingest/rotate`);
    expect((await as('orgAdmin', 200, 'POST', `/agents/${agent.id}/webhook-token`)).webhook_token).toEqual(expect.any(String));
    for (const action of [
      'agent.created',
      'agent.updated',
      'agent.toggle_changed',
      'agent.status_changed',
      'agent.webhook_token_created',
      'agent.key_rotated',
      'agent.webhook_token_revealed',
    ]) {
      expect(actorsOf(await entries(action, byAgent)), action).toEqual([orgAdminId]);
    }
  });

  it('issue 14: connection create, edit and delete, webhook action create and delete name the org admin', async () => {
    const agentId = seeded.agent.id;
    const conn = await as('orgAdmin', 201, 'POST', `/agents/${agentId}/connections`, { integration_id: 'crm', type: 'api_key', value: 'k-1' });
    await as('orgAdmin', 200, 'PATCH', `/connections/${conn.id}`, { value: 'k-2' });
    await as('orgAdmin', 204, 'DELETE', `/connections/${conn.id}`);
    const action = await as('orgAdmin', 201, 'POST', `/agents/${agentId}/webhook-actions`, { on_state: 'completed', url: 'https://hooks.example.test/x' });
    await as('orgAdmin', 204, 'DELETE', `/webhook-actions/${action.id}`);
    for (const a of ['connection.created', 'connection.updated', 'connection.deleted']) {
      expect(actorsOf(await entries(a, (e) => e.details.connection_id === conn.id)), a).toEqual([orgAdminId]);
    }
    for (const a of ['webhook_action.created', 'webhook_action.deleted']) {
      expect(actorsOf(await entries(a, (e) => e.details.webhook_action_id === action.id)), a).toEqual([orgAdminId]);
    }
  });

  it('issue 14: cancel, replay and redelivery of a run name the org admin', async () => {
    const queued = await insertRun(t.db, { agentId: seeded.agent.id, status: 'queued', source: 'trigger', now: t.ctx.clock.now(), input: { topic: 'x' } });
    await as('orgAdmin', 200, 'POST', `/runs/${queued.id}/cancel`);
    expect(actorsOf(await entries('run.cancelled', (e) => e.run_id === Number(queued.id)))).toEqual([orgAdminId]);
    // The run's error does not call an org admin a platform admin.
    expect((await t.db.query('SELECT error FROM runs WHERE id = $1', [queued.id])).rows[0]?.error).toBe('Run cancelled by an admin');

    const replay = await as('orgAdmin', 201, 'POST', `/runs/${queued.id}/replay`);
    expect(replay.replay_of).toBe(Number(queued.id));
    expect(replay.created_by).toBe(orgAdminId); // the replayed run is the user's, as a console start is
    expect(actorsOf(await entries('run.replayed', (e) => e.run_id === replay.runId))).toEqual([orgAdminId]);

    await seedWebhookAction(t, seeded.agent.id, 'completed', 'https://hooks.example.test/done');
    const done = await runTo(t, seeded.agent.id, 'completed', { outputData: { ok: true }, outputs: 1 });
    const [delivery] = await outboxFor(t, done);
    await as('orgAdmin', 202, 'POST', `/runs/${done}/deliveries/${delivery!.id}/redeliver`);
    expect(actorsOf(await entries('delivery.redelivered', (e) => e.run_id === done))).toEqual([orgAdminId]);
  });
});

describe('a platform admin user and the platform-admin token', () => {
  /** Organization, user, membership, token and runtime writes; returns the ids they made. */
  async function platformWrites(send: (status: number, method: Method, url: string, payload?: unknown) => Promise<Json>) {
    const orgId = (await send(201, 'POST', '/orgs', { name: 'Made here' })).id as string;
    const userId = (await send(201, 'POST', '/users', { email: `${orgId}@example.test` })).id as string;
    await send(201, 'POST', `/orgs/${orgId}/members`, { user_id: userId, role: 'member' });
    await send(204, 'DELETE', `/orgs/${orgId}/members/${userId}`);
    const tokenId = (await send(201, 'POST', `/users/${userId}/tokens`, { name: 'cli' })).id as string;
    await send(204, 'DELETE', `/users/${userId}/tokens/${tokenId}`);
    const runtimeId = (await send(201, 'POST', '/runtimes', { org_id: orgId, name: 'n8n', kind: 'workflow', base_url: 'https://n8n.example.test' })).id as number;
    await send(200, 'PATCH', `/runtimes/${runtimeId}`, { name: 'n8n (renamed)' });
    return { orgId, userId, tokenId, runtimeId };
  }

  async function expectActor(made: Awaited<ReturnType<typeof platformWrites>>, actor: string | null): Promise<void> {
    const { orgId, userId, tokenId, runtimeId } = made;
    const checks: Array<[string, (e: Json) => boolean]> = [
      ['org.created', (e) => e.details.org_id === orgId],
      ['user.created', (e) => e.details.user_id === userId],
      ['org.member_added', (e) => e.details.org_id === orgId && e.details.user_id === userId],
      ['org.member_removed', (e) => e.details.org_id === orgId && e.details.user_id === userId],
      ['user.token_created', (e) => e.details.token_id === tokenId],
      ['user.token_revoked', (e) => e.details.token_id === tokenId],
      ['runtime.created', (e) => e.details.runtime_id === runtimeId],
      ['runtime.updated', (e) => e.details.runtime_id === runtimeId],
    ];
    for (const [action, where] of checks) expect(actorsOf(await entries(action, where)), action).toEqual([actor]);
  }

  it('issue 14: organization, user, membership, token and runtime writes name the platform admin user', async () => {
    await expectActor(await platformWrites((status, method, url, payload) => as('platform', status, method, url, payload)), platformUserId);
  });

  it('issue 14: the same writes with the platform-admin token say null (nobody in particular)', async () => {
    await expectActor(await platformWrites((status, method, url, payload) => ok(t, status, method, url, payload).then((b) => b ?? {})), null);
    // The personal tokens this file's users sign in with were made by the admin token too.
    const made = await entries('user.token_created', (e) => e.details.user_id === orgAdminId || e.details.user_id === platformUserId);
    expect(actorsOf(made)).toEqual([null]);
  });

  it('issue 14: an agent write with the admin token says null', async () => {
    await ok(t, 200, 'POST', `/agents/${seeded.agent.id}/keys/agent/rotate`);
    const rotated = await entries('agent.key_rotated', (e) => e.agent_id === seeded.agent.id && e.details.kind === 'agent');
    expect(actorsOf(rotated)).toEqual([null]);
  });
});
