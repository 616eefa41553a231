// Retention (decisions.md "Retention"): outbox rows that finished (delivered or given up) and alert receipts are
// deleted ARS_RETENTION_DAYS after they finished or arrived; Idempotency-Keys once expired (ARS_IDEMPOTENCY_TTL_HOURS).
// In batches of short statements, and a bounded number per pass, so neither a large backlog nor shutdown (which
// waits for a running pass) is ever held up for long.
import type { AppContext } from '../context.ts';
import { deleteFinishedBefore } from '../events/outbox-repo.ts';
import { deleteReceiptsBefore } from '../runs/alert-receipts-repo.ts';
import { deleteExpiredKeys } from '../runs/idempotency-repo.ts';

const BATCH = 1_000;
/** At most this many batches per table and pass; the next pass goes on where this one stopped. */
const MAX_BATCHES = 100;
const DAY_MS = 86_400_000;

export interface PruneResult {
  outbox: number;
  alertReceipts: number;
  idempotencyKeys: number;
}

export async function pruneExpired(ctx: AppContext): Promise<PruneResult> {
  const now = ctx.clock.now();
  const cutoff = new Date(now.getTime() - ctx.config.retentionDays * DAY_MS);
  const outbox = await inBatches((limit) => deleteFinishedBefore(ctx.db, cutoff, limit));
  ctx.metrics.pruned('outbox', outbox);
  const alertReceipts = await inBatches((limit) => deleteReceiptsBefore(ctx.db, cutoff, limit));
  ctx.metrics.pruned('alert_receipts', alertReceipts);
  const idempotencyKeys = await inBatches((limit) => deleteExpiredKeys(ctx.db, now, limit));
  ctx.metrics.pruned('idempotency_keys', idempotencyKeys);
  if (outbox + alertReceipts + idempotencyKeys > 0) {
    ctx.log.info({ outbox, alertReceipts, idempotencyKeys, before: cutoff.toISOString() }, 'retention: old rows deleted');
  }
  return { outbox, alertReceipts, idempotencyKeys };
}

async function inBatches(batch: (limit: number) => Promise<number>): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await batch(BATCH);
    total += n;
    if (n < BATCH) break;
  }
  return total;
}
