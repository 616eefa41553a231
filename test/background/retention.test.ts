// Issue 11 item 5 "Operations", decisions.md "Retention": finished outbox rows (delivered or given up) and alert
// receipts older than ARS_RETENTION_DAYS are deleted in batches; pending and recent rows stay, and a runtime's
// resend of a recent alert is still recognised as a duplicate after a pruning pass. Expired Idempotency-Keys go too.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { signedFailureAlert } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { pruneExpired } from '../../src/background/retention.ts';
import { scrape } from '../metrics/exposition.ts';

const DAY = 86_400_000;
const ALERT_SECRET = 'whsec_retention_alert_secret_0123456789';

let t: TestApp;
const clock = new ManualClock(new Date('2026-03-20T12:00:00Z'));
let agent: SeededAgent;

beforeAll(async () => {
  t = await createTestApp({ clock, config: { retentionDays: 7 } });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: 'http://trigger.invalid', apiKey: 'tr_dev_x', alertSecret: ALERT_SECRET } });
});
afterAll(() => t.close());

const ago = (ms: number): Date => new Date(clock.now().getTime() - ms);

/** An outbox row in a given state; `label` is its message id. */
async function outboxRow(label: string, state: { deliveredAt?: Date; failedAt?: Date; createdAt: Date }): Promise<void> {
  await t.db.query(
    `INSERT INTO outbox (event, message_id, snapshot, delivered_at, failed_at, created_at, next_attempt_at)
     VALUES ('completed', $1, '{}'::jsonb, $2, $3, $4, $4)`,
    [label, state.deliveredAt ?? null, state.failedAt ?? null, state.createdAt],
  );
}

async function receipt(alertId: string, receivedAt: Date): Promise<void> {
  await t.db.query('INSERT INTO alert_receipts (runtime_id, alert_id, received_at) VALUES ($1, $2, $3)', [agent.runtimeId, alertId, receivedAt]);
}

async function left(sql: string): Promise<string[]> {
  return (await t.db.query<{ k: string }>(sql)).rows.map((r) => r.k).sort();
}

describe('decisions.md "Retention": pruning finished outbox rows and old alert receipts', () => {
  it('deletes what finished (or arrived) more than ARS_RETENTION_DAYS ago; keeps recent, pending and due rows; counts it', async () => {
    await outboxRow('delivered-8d', { deliveredAt: ago(8 * DAY), createdAt: ago(8 * DAY) });
    await outboxRow('given-up-8d', { failedAt: ago(8 * DAY), createdAt: ago(9 * DAY) });
    await outboxRow('delivered-6d', { deliveredAt: ago(6 * DAY), createdAt: ago(8 * DAY) }); // finished 6 days ago: kept
    await outboxRow('given-up-1h', { failedAt: ago(3_600_000), createdAt: ago(DAY + 3_600_000) });
    await outboxRow('pending-30d', { createdAt: ago(30 * DAY) }); // never finished: never pruned
    await outboxRow('pending-now', { createdAt: ago(0) });
    await receipt('alert-8d', ago(8 * DAY));
    await receipt('alert-1h', ago(3_600_000));

    const before = await scrape(t.app);
    expect(await pruneExpired(t.ctx)).toMatchObject({ outbox: 2, alertReceipts: 1, idempotencyKeys: 0 });
    const after = await scrape(t.app);

    expect(await left('SELECT message_id AS k FROM outbox')).toEqual(['delivered-6d', 'given-up-1h', 'pending-30d', 'pending-now']);
    expect(await left('SELECT alert_id AS k FROM alert_receipts')).toEqual(['alert-1h']);
    const moved = (table: string) => after.value('ars_retention_pruned_rows_total', { table }) - before.value('ars_retention_pruned_rows_total', { table });
    expect(moved('outbox')).toBe(2);
    expect(moved('alert_receipts')).toBe(1);
    expect(await pruneExpired(t.ctx)).toMatchObject({ outbox: 0, alertReceipts: 0, idempotencyKeys: 0 }); // nothing left to do
  });

  it('a backlog larger than one batch is deleted in batches by one pass', async () => {
    await t.db.query(
      `INSERT INTO outbox (event, message_id, snapshot, delivered_at, created_at, next_attempt_at)
       SELECT 'completed', 'bulk-' || n, '{}'::jsonb, $1, $1, $1 FROM generate_series(1, 2500) AS n`,
      [ago(10 * DAY)],
    );
    expect(await pruneExpired(t.ctx)).toMatchObject({ outbox: 2500, alertReceipts: 0, idempotencyKeys: 0 });
    expect(await left("SELECT message_id AS k FROM outbox WHERE message_id LIKE 'bulk-%'")).toEqual([]);
  });

  it('issue 13 item 4: expired Idempotency-Keys are deleted (whatever ARS_RETENTION_DAYS says); live ones stay', async () => {
    const run = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now: clock.now() });
    const key = (k: string, expiresAt: Date) =>
      t.db.query(
        `INSERT INTO idempotency_keys (agent_id, key, endpoint, fingerprint, run_id, created_at, expires_at) VALUES ($1, $2, 'trigger', 'f', $3, $4, $5)`,
        [agent.agent.id, k, run.id, ago(DAY), expiresAt],
      );
    await key('expired-1s', ago(1_000));
    await key('expires-in-1h', ago(-3_600_000));
    const before = await scrape(t.app);
    expect(await pruneExpired(t.ctx)).toMatchObject({ outbox: 0, alertReceipts: 0, idempotencyKeys: 1 });
    const after = await scrape(t.app);
    expect(await left('SELECT key AS k FROM idempotency_keys')).toEqual(['expires-in-1h']);
    const table = { table: 'idempotency_keys' };
    expect(after.value('ars_retention_pruned_rows_total', table) - before.value('ars_retention_pruned_rows_total', table)).toBe(1);
  });

  it('runtimes.md: a resend of an alert inside the retention is still a duplicate after a pass (dedupe survives pruning)', async () => {
    const run = await insertRun(t.db, { agentId: agent.agent.id, status: 'running', source: 'trigger', now: clock.now(), externalRunId: 'run_retained', startedAt: clock.now() });
    const alert = signedFailureAlert({ secret: ALERT_SECRET, runId: 'run_retained', taskIdentifier: agent.agent.target! }); // the agent's own task (issue 12)
    const send = () => t.app.inject({ method: 'POST', url: `/api/runtimes/${agent.runtimeId}/alerts`, headers: alert.headers, payload: alert.body });
    expect((await send()).json()).toMatchObject({ outcome: 'applied', runId: run.id });

    clock.advance(6 * DAY); // Trigger.dev retries within minutes; even days later the receipt is still there
    await pruneExpired(t.ctx);
    expect((await send()).json()).toMatchObject({ outcome: 'duplicate' });
  });
});
