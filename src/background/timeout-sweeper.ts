// Timeouts (spec part 3 rules 2–5, 8.2) as a background job: one set-based guarded UPDATE per kind, repeated
// while a batch comes back full. A `waiting` run is left to the poller (rule 3).
import type { AppContext } from '../context.ts';
import type { RunRow } from '../runs/runs-repo.ts';
import { TIMEOUT_BATCH, failQueuedTimedOut, failRunningTimedOut } from '../runs/timeout-transitions.ts';
import { QUEUED_TIMEOUT_REASON, RUNNING_TIMEOUT_REASON } from '../runs/timeout-reasons.ts';

export interface TimeoutSweepResult {
  queued: RunRow[];
  running: RunRow[];
}

export async function sweepTimeouts(ctx: AppContext): Promise<TimeoutSweepResult> {
  const now = ctx.clock.now();
  const queued = await drain(() => failQueuedTimedOut(ctx.db, now, ctx.config.queuedTimeoutMs, QUEUED_TIMEOUT_REASON));
  const running = await drain(() => failRunningTimedOut(ctx.db, now, RUNNING_TIMEOUT_REASON));
  for (const run of [...queued, ...running]) ctx.runWatch.publishRun(run);
  ctx.metrics.entered('timeout', 'failed', queued.length + running.length);
  if (queued.length + running.length > 0) {
    ctx.log.info({ queued: queued.length, running: running.length }, 'runs failed by timeout');
  }
  return { queued, running };
}

async function drain(step: () => Promise<RunRow[]>): Promise<RunRow[]> {
  const all: RunRow[] = [];
  for (;;) {
    const rows = await step();
    all.push(...rows);
    if (rows.length < TIMEOUT_BATCH) return all;
  }
}
