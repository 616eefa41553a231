// Issue 13 item 4 on the zone run endpoints (zones.md, spec 4.11; decisions.md "Idempotency keys"): keys are scoped
// by agent, as on the ingest endpoints; the token's user is part of what a request asks, so one member never gets
// another member's answer under the same key. A retried /runs/wait still running joins the same run.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { expectError, runCount, taskAgent, workflowAgent } from '../sync/sync-helpers.ts';
import { zoneToken } from '../credentials/connections.ts';

const n8n = new N8nFake();
const trig = new TriggerDevFake();
let t: TestApp;
let orgId: string;
let alice: string;
let bob: string;

beforeAll(async () => {
  await Promise.all([n8n.start(), trig.start()]);
  t = await createTestApp();
  orgId = await seedOrg(t);
  alice = await seedUser(t, { orgId });
  bob = await seedUser(t, { orgId });
});
afterAll(async () => {
  await t?.close();
  await Promise.all([n8n.stop(), trig.stop()]);
});

async function zone(a: SeededAgent, user: string, path: string, key: string, payload: object = {}) {
  const token = await zoneToken(t, a.agent, user);
  return t.app.inject({
    method: 'POST',
    url: `/api/zones/agents/${a.agent.id}${path}`,
    headers: { authorization: `Bearer ${token}`, 'idempotency-key': key },
    payload,
  });
}

const triggersOf = (a: SeededAgent & { task: string }) => trig.triggers().filter((r) => r.path === `/api/v1/tasks/${a.task}/trigger`).length;

describe('issue 13 item 4: Idempotency-Key on zone POST /runs (zones.md, as 4.1)', () => {
  it('the same member retrying replays the 201; one run, one runtime call', async () => {
    const a = await taskAgent(t, trig, undefined, { orgId });
    const first = await zone(a, alice, '/runs', 'z-1', { input: { q: 1 } });
    expect(first.statusCode, first.body).toBe(201);
    const again = await zone(a, alice, '/runs', 'z-1', { input: { q: 1 } });
    expect(again.statusCode).toBe(201);
    expect(again.body).toBe(first.body);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(await runCount(t, a.agent.id)).toBe(1);
    expect(triggersOf(a)).toBe(1);
  });

  it("another member under the same key is 422, not the first member's answer; nothing is written", async () => {
    const a = await taskAgent(t, trig, undefined, { orgId });
    expect((await zone(a, alice, '/runs', 'z-shared', { input: { q: 1 } })).statusCode).toBe(201);
    const other = expectError(await zone(a, bob, '/runs', 'z-shared', { input: { q: 1 } }), 422, 'idempotency_key_reused');
    expect(other).not.toHaveProperty('runId');
    expect(await runCount(t, a.agent.id)).toBe(1);
  });

  it('keys are scoped by agent: zone and ingest endpoints of one agent share them, another agent does not', async () => {
    const a = await taskAgent(t, trig, undefined, { orgId });
    const b = await taskAgent(t, trig, undefined, { orgId });
    expect((await zone(a, alice, '/runs', 'z-scope')).statusCode).toBe(201);
    const ingest = await t.app.inject({
      method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: { ...a.ingestAuth, 'idempotency-key': 'z-scope' }, payload: {},
    });
    expectError(ingest, 422, 'idempotency_key_reused');
    const elsewhere = await zone(b, alice, '/runs', 'z-scope');
    expect(elsewhere.statusCode).toBe(201);
    expect(elsewhere.headers['idempotent-replayed']).toBeUndefined();
    expect([await runCount(t, a.agent.id), await runCount(t, b.agent.id)]).toEqual([1, 1]);
  });
});

describe('issue 13 item 4: Idempotency-Key on zone POST /runs/wait (zones.md, as 4.2)', () => {
  it('a retry while the first call still waits joins the same run and gets the same answer', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const w = await workflowAgent(t, n8n, async () => (await gate, { json: { ok: 1 }, executionIdHeader: true }), { orgId });
    const first = zone(w, alice, '/runs/wait', 'z-wait', { timeoutMs: 30_000 });
    await vi.waitFor(() => expect(n8n.webhookCalls(w.path)).toHaveLength(1));
    const second = zone(w, alice, '/runs/wait', 'z-wait', { timeoutMs: 30_000 });
    await vi.waitFor(() => expect(t.ctx.waits.size).toBe(2));
    release();
    const [r1, r2] = await Promise.all([first, second]);
    expect(r1.statusCode, r1.body).toBe(200);
    expect(r2.statusCode, r2.body).toBe(200);
    expect(r2.json()).toEqual(r1.json());
    expect(r2.headers['idempotent-replayed']).toBe('true');
    expect(n8n.webhookCalls(w.path)).toHaveLength(1);
  });
});
