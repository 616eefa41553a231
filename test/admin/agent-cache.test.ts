// decisions.md "Rate limits" (agent cache): changes reach every instance by NOTIFY; a notification sent while an
// instance's LISTEN connection was down is lost, so the instance drops its whole cache when it listens again.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { seedAgent } from '../helpers/fixtures.ts';

let t: TestApp;
beforeAll(async () => {
  t = await createTestApp();
});
afterAll(() => t.close());

describe.skipIf(!onPostgres)('the per-instance agent cache after a lost LISTEN connection', () => {
  it('a change made while the instance was not listening is seen once it listens again', async () => {
    const a = await seedAgent(t);
    expect((await t.ctx.agents.get(a.agent.id))?.allow_external_triggers).toBe(true); // cached now

    // The LISTEN connection dies; the change below sends no notification (as one lost in the gap would be).
    const { rows } = await t.db.query<{ ok: boolean }>(
      `SELECT pg_terminate_backend(pid) AS ok FROM pg_stat_activity
       WHERE datname = current_database() AND pid <> pg_backend_pid() AND query LIKE 'LISTEN%'`,
    );
    expect(rows.length).toBeGreaterThan(0);
    await t.db.query('UPDATE agents SET allow_external_triggers = false WHERE id = $1', [a.agent.id]);

    await vi.waitFor(async () => expect((await t.ctx.agents.get(a.agent.id))?.allow_external_triggers).toBe(false), { timeout: 10_000, interval: 50 });

    // Listening again: a change made through the admin path (with its NOTIFY) is seen at once.
    await t.db.query('UPDATE agents SET allow_external_triggers = true WHERE id = $1', [a.agent.id]);
    await t.ctx.agents.changed(a.agent.id);
    expect((await t.ctx.agents.get(a.agent.id))?.allow_external_triggers).toBe(true);
  });
});

describe('the per-instance agent cache, by agent key', () => {
  it('an agent loaded by id (its run was triggered) is found by its agent key without a query', async () => {
    const a = await seedAgent(t);
    await t.ctx.agents.get(a.agent.id);
    const queries = vi.spyOn(t.ctx.db, 'query');
    try {
      expect((await t.ctx.agents.byAgentKey(a.agentKey))?.id).toBe(a.agent.id);
      expect(queries).not.toHaveBeenCalled();
      expect(await t.ctx.agents.byAgentKey(`${a.agentKey}x`)).toBeNull(); // any other key is looked up, and unknown
    } finally {
      queries.mockRestore();
    }
  });
});

describe('the per-instance agent cache and an eviction that overtakes a load', () => {
  it('a row read before a key rotation is not cached once the rotation evicted it: the old key stops working at once', async () => {
    const a = await seedAgent(t);
    // The next agent read is held until the rotation below has committed and evicted the entry.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    const real = t.ctx.db.query.bind(t.ctx.db);
    let gated = false;
    const spy = vi.spyOn(t.ctx.db, 'query').mockImplementation((async (sql: string, params?: readonly unknown[]) => {
      if (!gated && sql.startsWith('SELECT * FROM agents WHERE id')) {
        gated = true;
        const rows = await real(sql, params); // read now, as it was before the rotation
        await held;
        return rows;
      }
      return real(sql, params);
    }) as typeof t.ctx.db.query);
    try {
      const slow = t.ctx.agents.get(a.agent.id);
      await vi.waitFor(() => expect(gated).toBe(true));
      const rotated = await t.app.inject({ method: 'POST', url: `/api/admin/agents/${a.agent.id}/keys/agent/rotate`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
      expect(rotated.statusCode, rotated.body).toBe(200);
      release();
      const stale = await slow;
      expect(stale?.id).toBe(a.agent.id);
    } finally {
      spy.mockRestore();
    }
    // The stale row was not cached: the old agent key no longer authenticates, the new one does.
    expect(await t.ctx.agents.byAgentKey(a.agentKey)).toBeNull();
    const fresh = await t.ctx.agents.get(a.agent.id);
    expect(fresh?.agent_key_digest).not.toEqual(a.agent.agent_key_digest);
  });
});
