// Issue 14 "Sign-in and roles", the behaviour behind the auth matrix's cells (test/security/auth-matrix.test.ts):
// lists show only the user's organizations; an org admin manages its own agents but never another org's and never
// allow_external_triggers (spec 2.1: "set by a platform admin"); a member triggers runs as created_by and resumes
// waiting runs as the audited user.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { permissiveLimiter } from '../sync/sync-helpers.ts';
import { runState, waitingRun } from '../runs/waitpoint-helpers.ts';

const trig = new TriggerDevFake();
let t: TestApp;
let org1: string;
let org2: string;
let a: SeededAgent; // org 1
let c: SeededAgent; // org 2
const tokens: Record<'member' | 'orgAdmin' | 'platform', string> = { member: '', orgAdmin: '', platform: '' };
const ids: Record<'member' | 'orgAdmin', string> = { member: '', orgAdmin: '' };

async function personal(userId: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/api/admin/users/${userId}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
  return res.json().token;
}

beforeAll(async () => {
  await trig.start();
  trig.registerTask('my-target');
  t = await createTestApp({ limiter: permissiveLimiter, config: { outboundAllowHosts: ['127.0.0.1'] } });
  org1 = await seedOrg(t, 'One');
  org2 = await seedOrg(t, 'Two');
  const runtime = { kind: 'task' as const, baseUrl: trig.url, apiKey: trig.secretKey };
  a = await seedAgent(t, { orgId: org1, runtime, allow_external_triggers: false, default_input: { lang: 'en' } });
  c = await seedAgent(t, { orgId: org2, runtime });
  for (const agent of [a, c]) await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now: t.ctx.clock.now() });
  ids.member = await seedUser(t, { orgId: org1 });
  ids.orgAdmin = await seedUser(t, { orgId: org1, role: 'admin' });
  tokens.member = await personal(ids.member);
  tokens.orgAdmin = await personal(ids.orgAdmin);
  tokens.platform = await personal(await seedUser(t, { platformAdmin: true }));
});
afterAll(async () => {
  await t?.close();
  await trig.stop();
});

const as = (who: keyof typeof tokens, method: 'GET' | 'POST' | 'PATCH', url: string, payload?: object) =>
  t.app.inject({ method, url: `/api/admin${url}`, headers: { authorization: `Bearer ${tokens[who]}` }, ...(payload && { payload }) });

describe('lists show only the user’s organizations', () => {
  it('issue 14: a member sees org 1’s agents, runs, orgs and runtimes; a platform admin sees both orgs', async () => {
    const agentsOf = async (who: keyof typeof tokens) => (await as(who, 'GET', '/agents')).json().data.map((x: { org_id: string }) => x.org_id);
    expect(new Set(await agentsOf('member'))).toEqual(new Set([org1]));
    expect(new Set(await agentsOf('platform'))).toEqual(new Set([org1, org2]));
    const runAgents = (await as('member', 'GET', '/runs')).json().data.map((r: { agentId: number; agent_id?: number }) => r.agentId ?? r.agent_id);
    expect(runAgents.length).toBeGreaterThan(0);
    expect(runAgents.every((id: number) => id === a.agent.id)).toBe(true);
    expect((await as('member', 'GET', '/orgs')).json().data.map((o: { id: string }) => o.id)).toEqual([org1]);
    expect(new Set((await as('member', 'GET', '/runtimes')).json().data.map((r: { org_id: string }) => r.org_id))).toEqual(new Set([org1]));
  });

  it('issue 14: a filter naming another organization is an empty page, not its data', async () => {
    const res = await as('member', 'GET', `/agents?org_id=${org2}`);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([]);
    const dash = await as('member', 'GET', `/dashboard?org_id=${org2}`);
    expect(dash.statusCode).toBe(200);
    expect(dash.json().totals.runs).toBe(0);
  });

  it('issue 14: the audit log shows a member only entries about their organizations’ agents', async () => {
    await as('platform', 'POST', `/agents/${c.agent.id}/keys/ingest/rotate`); // an audited rotation in org 2
    const entries = (await as('member', 'GET', '/audit')).json().data as Array<{ agent_id: number | null }>;
    expect(entries.every((e) => e.agent_id === a.agent.id)).toBe(true);
    const all = (await as('platform', 'GET', '/audit')).json().data as Array<{ agent_id: number | null }>;
    expect(all.some((e) => e.agent_id === c.agent.id)).toBe(true);
  });
});

describe('org admins manage their own organization', () => {
  it('issue 14: an org admin creates and edits agents of its org; another org is 404; a member is 403', async () => {
    const created = await as('orgAdmin', 'POST', '/agents', { org_id: org1, name: 'Made by org admin', managed_by: 'standalone' });
    expect(created.statusCode, created.body).toBe(201);
    expect((await as('orgAdmin', 'POST', '/agents', { org_id: org2, name: 'No', managed_by: 'standalone' })).statusCode).toBe(404);
    expect((await as('member', 'POST', '/agents', { org_id: org1, name: 'No', managed_by: 'standalone' })).statusCode).toBe(403);
    expect((await as('orgAdmin', 'PATCH', `/agents/${a.agent.id}`, { name: 'Renamed' })).statusCode).toBe(200);
    expect((await as('orgAdmin', 'PATCH', `/agents/${c.agent.id}`, { name: 'Renamed' })).statusCode).toBe(404);
    expect((await as('member', 'PATCH', `/agents/${a.agent.id}`, { name: 'Renamed' })).statusCode).toBe(403);
  });

  it('spec 2.1 / issue 14: only a platform admin sets allow_external_triggers (403 naming it), on create and edit', async () => {
    const edit = await as('orgAdmin', 'PATCH', `/agents/${a.agent.id}`, { allow_external_triggers: true });
    expect(edit.statusCode).toBe(403);
    expect(edit.json().error).toContain('allow_external_triggers');
    const create = await as('orgAdmin', 'POST', '/agents', { org_id: org1, name: 'x', managed_by: 'platform', allow_external_triggers: true });
    expect(create.statusCode).toBe(403);
    expect((await as('platform', 'PATCH', `/agents/${a.agent.id}`, { allow_external_triggers: false })).statusCode).toBe(200);
  });

  it('issue 14: organizations, users and runtimes are for platform admins only', async () => {
    expect((await as('orgAdmin', 'POST', '/orgs', { name: 'Mine' })).statusCode).toBe(403);
    expect((await as('orgAdmin', 'GET', '/users')).statusCode).toBe(403);
    expect((await as('orgAdmin', 'POST', '/runtimes', { org_id: org1, name: 'r', kind: 'task', base_url: 'https://x.example' })).statusCode).toBe(403);
    expect((await as('platform', 'POST', '/orgs', { name: 'Theirs' })).statusCode).toBe(201);
  });
});

describe('members start and resume runs', () => {
  it('issue 14: POST /agents/{id}/runs starts a run as the member (created_by, source console), input merged over default_input', async () => {
    const res = await as('member', 'POST', `/agents/${a.agent.id}/runs`, { input: { topic: 'solar' } });
    expect(res.statusCode, res.body).toBe(201);
    const { runId } = res.json();
    const view = (await as('member', 'GET', `/runs/${runId}`)).json();
    expect(view).toMatchObject({ created_by: ids.member, source: 'console', input: { lang: 'en', topic: 'solar' } });
    // allow_external_triggers is off for this agent: the console is part of the platform, as zone apps are.
    expect((await as('member', 'POST', `/agents/${c.agent.id}/runs`, {})).statusCode).toBe(404);
  });

  it('issue 14: POST /runs/{runId}/waitpoint resumes a waiting run, audited with the member (run.waitpoint_completed)', async () => {
    const token = trig.createWaitpointToken();
    const runId = await waitingRun(t, a.agent.id, { tokenId: token.id });
    const res = await as('member', 'POST', `/runs/${runId}/waitpoint`, { payload: { approved: true } });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toEqual({ ok: true });
    expect((await runState(t, runId)).status).toBe('running');
    expect(trig.token(token.id).data).toEqual({ approved: true });
    const { rows } = await t.db.query("SELECT actor_user_id, details FROM audit_log WHERE action = 'run.waitpoint_completed' AND run_id = $1", [runId]);
    expect(rows).toEqual([{ actor_user_id: ids.member, details: { via: 'console' } }]);
  });

  it('issue 14: a member may not cancel (an org admin may)', async () => {
    const run = await insertRun(t.db, { agentId: a.agent.id, status: 'queued', source: 'trigger', now: t.ctx.clock.now() });
    expect((await as('member', 'POST', `/runs/${run.id}/cancel`)).statusCode).toBe(403);
    expect((await as('orgAdmin', 'POST', `/runs/${run.id}/cancel`)).statusCode).toBe(200);
  });
});
