// Runtimes and an agent's connection map are cached per instance (agent-directory.ts). These tests drive the
// admin API the way an operator does and check that the next run sees every change at once (decisions.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { newOrg, ok } from '../admin/admin-helpers.ts';

const first = new TriggerDevFake();
const second = new TriggerDevFake({ secretKey: first.secretKey });
let t: TestApp;

beforeAll(async () => {
  await Promise.all([first.start(), second.start()]);
  first.registerTask('cached');
  second.registerTask('cached');
  t = await createTestApp();
});
afterAll(async () => {
  await first.stop();
  await second.stop();
  await t.close();
});

async function trigger(agentId: number, ingestKey: string): Promise<void> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agentId}/runs/trigger`, headers: { authorization: `Bearer ${ingestKey}` }, payload: {} });
  expect(res.statusCode, res.body).toBe(201);
}

const lastPayload = (fake: TriggerDevFake) => (fake.triggers().at(-1)!.body as { payload: Record<string, unknown> }).payload;

describe('decisions.md: cached runtimes and connection maps follow admin changes at once', () => {
  it('spec 2.3: a connection added, deactivated or deleted through the admin API shows in the very next payload', async () => {
    const org = await newOrg(t);
    const rt = await ok(t, 201, 'POST', '/runtimes', { org_id: org, name: 'trigger', kind: 'task', base_url: first.url, api_key: first.secretKey });
    const agent = await ok(t, 201, 'POST', '/agents', { org_id: org, name: 'a', managed_by: 'platform', runtime_id: rt.id, target: 'cached', allow_external_triggers: true });

    await trigger(agent.id, agent.ingest_api_key); // caches the empty map
    expect(lastPayload(first)).not.toHaveProperty('connectionIds');

    const conn = await ok(t, 201, 'POST', `/agents/${agent.id}/connections`, { integration_id: 'github', type: 'api_key', value: 'ghp_x' });
    await trigger(agent.id, agent.ingest_api_key);
    expect(lastPayload(first).connectionIds).toEqual({ github: { integrationId: 'github', connectionId: conn.id } });
    expect(typeof lastPayload(first).credentialsToken).toBe('string');

    await ok(t, 200, 'PATCH', `/connections/${conn.id}`, { active: false });
    await trigger(agent.id, agent.ingest_api_key);
    expect(lastPayload(first)).not.toHaveProperty('connectionIds');

    await ok(t, 200, 'PATCH', `/connections/${conn.id}`, { active: true });
    await trigger(agent.id, agent.ingest_api_key);
    expect(lastPayload(first)).toHaveProperty('connectionIds');
    await ok(t, 204, 'DELETE', `/connections/${conn.id}`);
    await trigger(agent.id, agent.ingest_api_key);
    expect(lastPayload(first)).not.toHaveProperty('connectionIds');
  });

  it('admin-api.md: a runtime whose base_url is patched is called at the new address by the next run', async () => {
    const org = await newOrg(t);
    const rt = await ok(t, 201, 'POST', '/runtimes', { org_id: org, name: 'trigger', kind: 'task', base_url: first.url, api_key: first.secretKey });
    const agent = await ok(t, 201, 'POST', '/agents', { org_id: org, name: 'b', managed_by: 'platform', runtime_id: rt.id, target: 'cached', allow_external_triggers: true });
    await trigger(agent.id, agent.ingest_api_key); // caches the runtime
    const before = second.triggers().length;
    await ok(t, 200, 'PATCH', `/runtimes/${rt.id}`, { base_url: second.url });
    await trigger(agent.id, agent.ingest_api_key);
    expect(second.triggers().length).toBe(before + 1);
  });
});
