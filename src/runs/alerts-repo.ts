// Runtime failure alerts (decisions.md "Events"): delivered at least once, so each id is remembered per runtime.
import type { Queryable } from '../storage/db.ts';

/** True the first time this alert id arrives for the runtime; false for a repeat delivery. */
export async function recordAlertReceipt(q: Queryable, runtimeId: number, alertId: string, now: Date): Promise<boolean> {
  const { rows } = await q.query(
    `INSERT INTO alert_receipts (runtime_id, alert_id, received_at) VALUES ($1, $2, $3)
     ON CONFLICT (runtime_id, alert_id) DO NOTHING RETURNING alert_id`,
    [runtimeId, alertId, now],
  );
  return rows.length > 0;
}

/** The run a runtime knows as `externalRunId`, among the runs of agents on that runtime. */
export async function findRunIdByRuntimeExternalId(q: Queryable, runtimeId: number, externalRunId: string): Promise<number | null> {
  const { rows } = await q.query<{ id: number }>(
    `SELECT r.id FROM runs r JOIN agents a ON a.id = r.agent_id
     WHERE a.runtime_id = $1 AND r.external_run_id = $2
     ORDER BY r.id DESC LIMIT 1`,
    [runtimeId, externalRunId],
  );
  return rows[0]?.id ?? null;
}
