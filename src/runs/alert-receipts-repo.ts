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
