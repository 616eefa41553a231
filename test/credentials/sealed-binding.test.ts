// decisions.md "Storage and secrets" (issue 12, finding 8): a sealed secret is bound to its table, column and row.
// Someone who can write the database but holds no master key cannot move agent B's secret into agent A's row
// and have the service use it for A: the value no longer opens there, and the request fails without showing it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, type SeededAgent } from '../helpers/fixtures.ts';
import { credentialsToken, seedConnection } from './connections.ts';

let t: TestApp;
let victim: SeededAgent;
let attacker: SeededAgent;
const VICTIM_SECRET = 'sk_live_VICTIM_connection_0001';

beforeAll(async () => {
  t = await createTestApp();
  victim = await seedAgent(t, { orgId: await seedOrg(t, 'Victim'), allow_webhook_triggers: true });
  attacker = await seedAgent(t, { orgId: await seedOrg(t, 'Attacker'), allow_webhook_triggers: true });
});
afterAll(() => t.close());

describe('sealed secrets moved to another row', () => {
  it("spec 4.10: another agent's connection secret copied into the attacker's connection row does not resolve", async () => {
    const stolen = await seedConnection(t, victim.agent.id, { integrationId: 'stripe', type: 'api_key', secret: { value: VICTIM_SECRET } });
    const own = await seedConnection(t, attacker.agent.id, { integrationId: 'stripe', type: 'api_key', secret: { value: 'sk_live_attacker' } });
    await t.db.query('UPDATE connections SET secret_enc = (SELECT secret_enc FROM connections WHERE id = $1) WHERE id = $2', [stolen, own]);
    const before = t.logs.length;
    const res = await t.app.inject({
      method: 'GET',
      url: `/api/credentials/${own}/resolve`,
      headers: { ...attacker.agentAuth, 'x-credentials-token': await credentialsToken(t, attacker.agent) },
    });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain(VICTIM_SECRET);
    const logs = t.logs.slice(before).join('\n');
    expect(logs).toContain(`connections.secret_enc of row ${own} does not open`);
    expect(logs).not.toContain(VICTIM_SECRET);
  });

  it("admin-api.md: a webhook token copied from another agent's row is not revealed as this agent's", async () => {
    await t.db.query('UPDATE agents SET webhook_token_enc = (SELECT webhook_token_enc FROM agents WHERE id = $1) WHERE id = $2', [victim.agent.id, attacker.agent.id]);
    const res = await t.app.inject({ method: 'POST', url: `/api/admin/agents/${attacker.agent.id}/webhook-token`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(res.statusCode).toBe(500);
    expect(res.body).not.toContain(victim.webhookToken!);
    expect(t.logs.join('\n')).not.toContain(victim.webhookToken!);
  });
});
