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
import { setTimeout } from 'node:timers/promises';
import { deleteFinishedRunsBefore, type DeletedRuns } from '../runs/run-retention.ts';
import { scrubRunsBefore } from '../runs/run-scrub.ts';

const BATCH = 1_000;
/** At most this many batches per table and pass; the next pass goes on where this one stopped. */
const MAX_BATCHES = 100;
/**
 * Runs per batch: a run is a wide row with seven indexes, its timeline, outbox rows and keys; a smaller batch keeps
 * each transaction short beside the requests writing runs. After each batch the pass waits as long as the batch
 * took (19 times as long on PGlite: pauseFactor), so deleting a backlog takes at most half of one connection's
 * time: the bench's retention scenario measured /trigger at 91% beside batches back to back on PostgreSQL, 83% on
 * PGlite. 40 batches a pass (20,000 runs every ~10 minutes, 2.9 million a day) keep a pass, which shutdown waits
 * for, within seconds.
 */
const RUN_BATCH = 500;
/**
 * The pause after a batch, in multiples of the batch's time. PostgreSQL deletes on a connection of its own: a pause
 * as long as the batch kept /trigger at 94% in the bench. PGlite deletes on the service's own thread, where every
 * millisecond of a batch is one no request gets, and costs more than its own time (the inserts beside it slow
 * down): at a tenth of the thread (9) the bench measured 85.3%; a twentieth (19) is the setting.
 */
const pauseFactor = (ctx: AppContext): number => (ctx.db.driver === 'pglite' ? 19 : 1);
const RUN_MAX_BATCHES = 40;
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
    ({ runs: out.runs, children: out.runChildren } = await deleteOldRuns(ctx, before));
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

/**
 * One pass of run retention: batches of terminal runs finished before `before`, each followed by a pause as long as
 * it took, until one comes back short or `maxBatches` have run (the bench runs passes of one batch back to back).
 */
export async function deleteOldRuns(ctx: AppContext, before: Date, maxBatches = RUN_MAX_BATCHES): Promise<DeletedRuns> {
  const total: DeletedRuns = { runs: 0, children: 0 };
  for (let i = 0; i < maxBatches; i++) {
    const t0 = performance.now();
    const batch = await deleteFinishedRunsBefore(ctx.db, before, RUN_BATCH);
    total.runs += batch.runs;
    total.children += batch.children;
    if (batch.runs < RUN_BATCH) break;
    await setTimeout((performance.now() - t0) * pauseFactor(ctx));
  }
  ctx.metrics.pruned('runs', total.runs);
  return total;
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
