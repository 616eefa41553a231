// The outbox of webhook-action deliveries (decisions.md "Events"). Rows are queued by every status write
// (run-transitions.ts) in the same statement as the write; this file claims and settles them. Any number of
// instances may run the worker: a claim takes due rows with FOR UPDATE SKIP LOCKED and leases them (locked_until)
// in that statement, so another instance neither blocks on them nor takes them until the lease lapses (a crashed
// worker's rows return).
import type { Queryable } from '../storage/db.ts';

export interface OutboxRow {
  id: number;
  webhook_action_id: string | null;
  run_id: number | null;
  event: string;
  message_id: string;
  snapshot: Record<string, unknown>;
  attempts: number;
  next_attempt_at: Date;
  locked_until: Date | null;
  delivered_at: Date | null;
  failed_at: Date | null;
  last_error: string | null;
  created_at: Date;
}

/** A claimed row with its webhook action (null when the action is gone). */
export interface ClaimedDelivery extends OutboxRow {
  action_url: string | null;
  action_secret_enc: string | null;
  /** The trace the run was started in (run_traces), carried to the receiver; null when none. */
  traceparent: string | null;
}

export async function claimDueDeliveries(q: Queryable, now: Date, leaseUntil: Date, limit: number): Promise<ClaimedDelivery[]> {
  const { rows } = await q.query<ClaimedDelivery>(
    `WITH due AS (
       SELECT id FROM outbox
       WHERE delivered_at IS NULL AND failed_at IS NULL AND next_attempt_at <= $1
         AND (locked_until IS NULL OR locked_until <= $1)
       ORDER BY next_attempt_at, id
       LIMIT $3
       FOR UPDATE SKIP LOCKED
     )
     UPDATE outbox o SET locked_until = $2
     FROM due WHERE o.id = due.id
     RETURNING o.*,
       (SELECT wa.url FROM webhook_actions wa WHERE wa.id = o.webhook_action_id) AS action_url,
       (SELECT wa.signing_secret_enc FROM webhook_actions wa WHERE wa.id = o.webhook_action_id) AS action_secret_enc,
       (SELECT rt.traceparent FROM run_traces rt WHERE rt.run_id = o.run_id) AS traceparent`,
    [now, leaseUntil, limit],
  );
  return rows;
}

/** Rows still to deliver, due or not (the metrics' backlog gauge); served by the partial index outbox_due_idx. */
/** Deliveries neither delivered nor given up, and how long the oldest of them has waited (0 when none). */
export async function pendingDeliveries(q: Queryable, now: Date): Promise<{ count: number; oldestAgeSeconds: number }> {
  const { rows } = await q.query<{ n: number; oldest: Date | null }>(
    'SELECT count(*) AS n, min(created_at) AS oldest FROM outbox WHERE delivered_at IS NULL AND failed_at IS NULL',
  );
  const oldest = rows[0]!.oldest;
  return { count: Number(rows[0]!.n), oldestAgeSeconds: oldest ? Math.max(0, (now.getTime() - new Date(oldest).getTime()) / 1000) : 0 };
}

/**
 * Retention: deletes up to `limit` rows that finished (delivered or given up) before `cutoff`; returns how many.
 * One short statement per batch (outbox_finished_idx), so a large backlog never holds locks for long. `= ANY(ARRAY(…))`
 * rather than `IN (…)`: as a prepared (generic) statement, IN was planned as a hash join over the whole table.
 */
export async function deleteFinishedBefore(q: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM outbox WHERE id = ANY(ARRAY(
       SELECT id FROM outbox
       WHERE (delivered_at IS NOT NULL OR failed_at IS NOT NULL) AND coalesce(delivered_at, failed_at) < $1
       LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    [cutoff, limit],
  );
  return rowCount;
}

// The settling writes are guarded on the lease they were claimed under: a worker whose lease lapsed (and whose row
// another instance took over) must not overwrite the newer outcome.

export function markDelivered(q: Queryable, id: number, lease: Date, now: Date): Promise<boolean> {
  return settle(q, id, lease, 'delivered_at = $3, last_error = NULL', [now]);
}

export function scheduleRetry(q: Queryable, id: number, lease: Date, nextAttemptAt: Date, error: string): Promise<boolean> {
  return settle(q, id, lease, 'next_attempt_at = $3, last_error = $4', [nextAttemptAt, error]);
}

export function markGivenUp(q: Queryable, id: number, lease: Date, now: Date, error: string): Promise<boolean> {
  return settle(q, id, lease, 'failed_at = $3, last_error = $4', [now, error]);
}

/** One attempt's outcome ($3, $4 … in `sets`), written only while the row is still under our lease. */
async function settle(q: Queryable, id: number, lease: Date, sets: string, values: unknown[]): Promise<boolean> {
  const { rowCount } = await q.query(
    `UPDATE outbox SET attempts = attempts + 1, ${sets}, locked_until = NULL
     WHERE id = $1 AND locked_until = $2 AND delivered_at IS NULL`,
    [id, lease, ...values],
  );
  return rowCount > 0;
}

// The admin view of a run's deliveries (issue 14): the row's bookkeeping only — never the snapshot (the run's data)
// nor the webhook action's URL or secret.

export type DeliveryRow = Pick<
  OutboxRow,
  'id' | 'webhook_action_id' | 'event' | 'attempts' | 'next_attempt_at' | 'delivered_at' | 'failed_at' | 'last_error' | 'created_at'
>;
const DELIVERY_COLUMNS = 'id, webhook_action_id, event, attempts, next_attempt_at, delivered_at, failed_at, last_error, created_at';

/** A run's deliveries, oldest first (outbox_run_idx). */
export async function listRunDeliveries(q: Queryable, runId: number): Promise<DeliveryRow[]> {
  const { rows } = await q.query<DeliveryRow>(`SELECT ${DELIVERY_COLUMNS} FROM outbox WHERE run_id = $1 ORDER BY id`, [runId]);
  return rows;
}

export async function findRunDelivery(q: Queryable, runId: number, id: number): Promise<(DeliveryRow & { locked_until: Date | null }) | null> {
  const { rows } = await q.query<DeliveryRow & { locked_until: Date | null }>(
    `SELECT ${DELIVERY_COLUMNS}, locked_until FROM outbox WHERE id = $1 AND run_id = $2`,
    [id, runId],
  );
  return rows[0] ?? null;
}

/**
 * Queues a delivery again, due at `now`: a delivered or given-up one becomes pending once more (same message id, so
 * receivers dedupe), its attempts kept. Not while a worker holds it (an attempt in flight): null then, or when
 * there is no such delivery of this run.
 */
export async function requeueDelivery(q: Queryable, runId: number, id: number, now: Date): Promise<DeliveryRow | null> {
  const { rows } = await q.query<DeliveryRow>(
    `UPDATE outbox SET next_attempt_at = $3, delivered_at = NULL, failed_at = NULL
     WHERE id = $1 AND run_id = $2 AND (locked_until IS NULL OR locked_until <= $3)
     RETURNING ${DELIVERY_COLUMNS}`,
    [id, runId, now],
  );
  return rows[0] ?? null;
}
