// A run's outbound deliveries (issue 14): what was sent to its webhook actions, and redelivery on demand. The
// outbox worker does the sending; a redelivery only makes the row due again (decisions.md "Console API").
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { findRunDelivery, listRunDeliveries, requeueDelivery, type DeliveryRow } from '../events/outbox-repo.ts';
import { findRun } from '../runs/runs-repo.ts';
import { isoOrNull } from '../runs/run-view.ts';

export interface DeliveryView {
  id: number;
  webhook_action_id: string | null;
  event: string;
  attempts: number;
  next_attempt_at: string;
  delivered_at: string | null;
  failed_at: string | null;
  last_error: string | null;
  created_at: string;
}

export function deliveryView(row: DeliveryRow): DeliveryView {
  return {
    id: Number(row.id),
    webhook_action_id: row.webhook_action_id,
    event: row.event,
    attempts: Number(row.attempts),
    next_attempt_at: isoOrNull(row.next_attempt_at)!,
    delivered_at: isoOrNull(row.delivered_at),
    failed_at: isoOrNull(row.failed_at),
    last_error: row.last_error,
    created_at: isoOrNull(row.created_at)!,
  };
}

export async function listDeliveries(ctx: AppContext, runId: number): Promise<{ data: DeliveryView[] }> {
  if (!(await findRun(ctx.db, runId))) throw errors.notFound('run');
  return { data: (await listRunDeliveries(ctx.db, runId)).map(deliveryView) };
}

/** 404 for an unknown run or a delivery of another run; 409 while an attempt is in flight. */
export async function redeliver(ctx: AppContext, runId: number, deliveryId: number, actorUserId: string | null): Promise<DeliveryView> {
  const run = await findRun(ctx.db, runId);
  if (!run) throw errors.notFound('run');
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    const requeued = await requeueDelivery(tx, runId, deliveryId, now);
    if (requeued) {
      const details = { delivery_id: deliveryId, event: requeued.event, webhook_action_id: requeued.webhook_action_id };
      await appendAudit(tx, { action: 'delivery.redelivered', actorUserId, agentId: Number(run.agent_id), runId, details }, now);
    }
    return requeued;
  });
  if (row) return deliveryView(row);
  if (!(await findRunDelivery(ctx.db, runId, deliveryId))) throw errors.notFound('delivery');
  throw errors.conflict(`delivery ${deliveryId} is being attempted right now; try again once it has settled`);
}
