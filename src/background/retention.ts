// Retention (decisions.md "Retention"): outbox rows that finished (delivered or given up) and alert receipts are
// deleted ARS_RETENTION_DAYS after they finished or arrived; Idempotency-Keys once expired (ARS_IDEMPOTENCY_TTL_HOURS).
// Opt-in (decisions.md "Data lifecycle"; unset, the contract's default: kept indefinitely): terminal runs deleted
// ARS_RUN_RETENTION_DAYS after they finished, scrubbed ARS_RUN_SCRUB_DAYS after their last change, audit entries
// deleted ARS_AUDIT_RETENTION_DAYS after they were written.
// In batches of short statements, and a bounded number per pass, so neither a large backlog nor shutdown (which
// waits for a running pass) is ever held up for long.
import type { AppContext } from '../context.ts';
import { deleteFinishedBefore } from '../events/outbox-repo.ts';
import { deleteAuditBefore } from '../orgs/audit-repo.ts';
import { deleteReceiptsBefore } from '../runs/alert-receipts-repo.ts';
import { deleteExpiredKeys } from '../runs/idempotency-repo.ts';
import { deleteFinishedRunsBefore } from '../runs/run-retention.ts';
import { scrubRunsBefore } from '../runs/run-scrub.ts';

const BATCH = 1_000;
/** At most this many batches per table and pass; the next pass goes on where this one stopped. */
const MAX_BATCHES = 100;
/**
 * Runs per batch: a run is a wide row with seven indexes, its timeline, outbox rows and keys; a smaller batch keeps
 * each transaction short beside the requests writing runs (the bench's retention scenario).
 */
export const RUN_BATCH = 500;
const DAY_MS = 86_400_000;

export interface PruneResult {
  outbox: number;
  alertReceipts: number;
  idempotencyKeys: number;
  /** Opt-in; 0 when its setting is unset. */
  runs: number;
  runChildren: number;
  runsScrubbed: number;
  audit: number;
}

export async function pruneExpired(ctx: AppContext): Promise<PruneResult> {
  const now = ctx.clock.now();
  const daysAgo = (days: number) => new Date(now.getTime() - days * DAY_MS);
  const cutoff = daysAgo(ctx.config.retentionDays);
  const outbox = await inBatches((limit) => deleteFinishedBefore(ctx.db, cutoff, limit));
  ctx.metrics.pruned('outbox', outbox);
  const alertReceipts = await inBatches((limit) => deleteReceiptsBefore(ctx.db, cutoff, limit));
  ctx.metrics.pruned('alert_receipts', alertReceipts);
  const idempotencyKeys = await inBatches((limit) => deleteExpiredKeys(ctx.db, now, limit));
  ctx.metrics.pruned('idempotency_keys', idempotencyKeys);
  if (outbox + alertReceipts + idempotencyKeys > 0) {
    ctx.log.info({ outbox, alertReceipts, idempotencyKeys, before: cutoff.toISOString() }, 'retention: old rows deleted');
  }
  const lifecycle = await pruneLifecycle(ctx, now, daysAgo);
  return { outbox, alertReceipts, idempotencyKeys, ...lifecycle };
}

/** The opt-in part: runs deleted, then runs scrubbed (a run about to be deleted is not scrubbed first), then audit. */
async function pruneLifecycle(ctx: AppContext, now: Date, daysAgo: (days: number) => Date) {
  const { runRetentionDays, runScrubDays, auditRetentionDays } = ctx.config.lifecycle;
  const out = { runs: 0, runChildren: 0, runsScrubbed: 0, audit: 0 };
  if (runRetentionDays !== null) {
    const before = daysAgo(runRetentionDays);
    out.runs = await inBatches(async () => {
      const batch = await deleteFinishedRunsBefore(ctx.db, before, RUN_BATCH);
      out.runChildren += batch.children;
      return batch.runs;
    }, RUN_BATCH);
    ctx.metrics.pruned('runs', out.runs);
    if (out.runs > 0) ctx.log.info({ runs: out.runs, runChildren: out.runChildren, finishedBefore: before.toISOString() }, 'retention: old runs deleted');
  }
  if (runScrubDays !== null) {
    const before = daysAgo(runScrubDays);
    // A batch counts the runs the cursor passed; only the terminal ones among them are scrubbed.
    await inBatches(async (limit) => {
      const batch = await scrubRunsBefore(ctx.db, before, now, limit);
      out.runsScrubbed += batch.scrubbed;
      return batch.read;
    });
    ctx.metrics.pruned('runs_scrubbed', out.runsScrubbed);
    if (out.runsScrubbed > 0) ctx.log.info({ runsScrubbed: out.runsScrubbed, unchangedSince: before.toISOString() }, 'retention: old runs scrubbed');
  }
  if (auditRetentionDays !== null) {
    const before = daysAgo(auditRetentionDays);
    out.audit = await inBatches((limit) => deleteAuditBefore(ctx.db, before, limit));
    ctx.metrics.pruned('audit_log', out.audit);
    if (out.audit > 0) ctx.log.info({ audit: out.audit, before: before.toISOString() }, 'retention: old audit entries deleted');
  }
  return out;
}

async function inBatches(batch: (limit: number) => Promise<number>, size = BATCH): Promise<number> {
  let total = 0;
  for (let i = 0; i < MAX_BATCHES; i++) {
    const n = await batch(size);
    total += n;
    if (n < size) break;
  }
  return total;
}
