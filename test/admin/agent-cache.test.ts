// decisions.md "Rate limits" (agent cache): changes reach every instance by NOTIFY; a notification sent while an
// instance's LISTEN connection was down is lost, so the instance drops its whole cache when it listens again.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
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

