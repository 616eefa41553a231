// Runtime failure alerts (decisions.md "Events"): delivered at least once, so each id is remembered per runtime,
// for the retention period (decisions.md "Retention"): runtimes resend within minutes, not days.
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

/**
 * Retention: deletes up to `limit` receipts that arrived before `cutoff`, in one short statement; returns how many.
 * By ctid (the rows are locked by the same statement, so it cannot move): a TID scan, where a composite-key IN
 * was planned as a hash join over the whole table once the statement was prepared.
 */
export async function deleteReceiptsBefore(q: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM alert_receipts WHERE ctid = ANY(ARRAY(
       SELECT ctid FROM alert_receipts WHERE received_at < $1
       LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    [cutoff, limit],
  );
  return rowCount;
}
