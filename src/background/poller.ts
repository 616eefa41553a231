// Status polling as a background job (spec part 1, 8.2 "status poll interval"): claims due runs, polls each at
// its runtime, applies the answer. Thin on purpose: the claim is SQL (poll-repo), the meaning is poll-run.
import type { AppContext } from '../context.ts';
import { claimDueForPoll } from '../runs/poll-claims.ts';
import { pollRun, type PollOutcome } from '../runs/poll-run.ts';
import type { RuntimeConnection } from '../runtimes/runtime-adapter.ts';

/** Runs claimed per statement, and polled at once at most (one slow runtime must not stall the rest). */
const BATCH = 50;
const CONCURRENCY = 8;
/** Longer than one poll can take (connect + headers + body timeouts, plus an output download). */
export const POLL_LEASE_MS = 120_000;

export interface PollPassResult {
  polled: number;
  outcomes: PollOutcome[];
}

/** One pass: polls every run due now, batch by batch, until none is left. */
export async function pollDueRuns(ctx: AppContext): Promise<PollPassResult> {
  const outcomes: PollOutcome[] = [];
  // Runtimes come from the per-instance cache (agent-directory.ts): no query per polled run.
  const runtimeFor = (id: number | null): Promise<RuntimeConnection | null> => (id === null ? Promise.resolve(null) : ctx.agents.runtime(id));
  for (;;) {
    const claimedAt = ctx.clock.now();
    const due = await claimDueForPoll(ctx.db, claimedAt, BATCH, POLL_LEASE_MS);
    for (const d of due) ctx.metrics.pollClaimed(claimedAt.getTime() - d.dueAt.getTime());
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < due.length) {
        const item = due[next++]!;
        try {
          outcomes.push(await pollRun(ctx, item, await runtimeFor(item.runtimeId)));
        } catch (err) {
          // A surprise on one run (a database error) must not stop the others; its lease expires on its own.
          ctx.log.error({ err, runId: item.run.id }, 'status poll failed unexpectedly');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, due.length) }, worker));
    if (due.length < BATCH) break;
  }
  return { polled: outcomes.length, outcomes };
}
