// Recovery of runs whose runtime call this service lost (issue "Runs survive restarts"; decisions.md "Recovering
// lost runs"). A run's lease lapsed: the instance that held its n8n call, its file stream or its task trigger is
// gone. The run is looked up at its runtime by what its payload carried (the run id and this deployment's id) —
// never by guesswork, so two deployments sharing a runtime never adopt each other's executions — and finished
// from the runtime's record, or followed by the poller until it finishes.
import type { AppContext } from '../context.ts';
import type { FoundRun, RuntimeAdapter, RuntimeConnection } from '../runtimes/runtime-adapter.ts';
import { adoptFoundRun, claimLostRuns, dropLease, type LostRun } from './run-leases.ts';
import { applyRemoteStatus, type PollOutcome } from './poll-run.ts';
import { transition } from './run-transitions.ts';
import { noteUnrecordedExternalId } from './start-run.ts';
import { belongsTo } from './run-ownership.ts';

/** How soon a recovered run that is still running at its runtime is first polled (decisions.md "Recovery"). */
export const RECOVERED_FIRST_POLL_S = 10;

/** Claimed per statement, and looked up at once at most. */
const BATCH = 20;
const CONCURRENCY = 4;
/** A run not found (yet) is looked at again after this (a list may lag; a call may still be on its way). */
export const RECOVERY_RETRY_MS = 10_000;
/**
 * A task run that its runtime still does not show this long after it was created never got there (the trigger
 * failed before reaching it): failed now instead of at the queued timeout. Long enough for the runtime's replica
 * lag on lists.
 */
export const TRIGGER_NEVER_ARRIVED_MS = 120_000;

export const TRIGGER_NEVER_ARRIVED_REASON = 'the task runtime has no record of this run: its trigger never reached it';
export const HELD_CALL_LOST_NOTE =
  "This instance lost its held call to n8n (a restart or a crash); the run was finished from n8n's execution record. " +
  "n8n does not keep what the Respond to Webhook node sent, so output_data is the last node's output.";

export type RecoveryOutcome =
  | { kind: 'adopted'; externalRunId: string; outcome: PollOutcome }
  | { kind: 'foreign'; outcome: PollOutcome } // found, but another task's or workflow's run: failed, not adopted
  | { kind: 'not_found' } // looked at again after RECOVERY_RETRY_MS
  | { kind: 'never_arrived' } // a task run failed: its trigger never reached the runtime
  | { kind: 'unavailable'; message: string } // the runtime did not answer usefully; looked again later
  | { kind: 'no_runtime' };

/** One pass: every run whose lease lapsed, batch by batch. */
export async function recoverLostRuns(ctx: AppContext): Promise<Array<RecoveryOutcome & { runId: number }>> {
  const outcomes: Array<RecoveryOutcome & { runId: number }> = [];
  for (;;) {
    const lost = await claimLostRuns(ctx.db, ctx.clock.now(), BATCH, RECOVERY_RETRY_MS);
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < lost.length) {
        const item = lost[next++]!;
        try {
          outcomes.push({ runId: Number(item.run.id), ...(await recoverRun(ctx, item)) });
        } catch (err) {
          // One run's surprise (a database error) must not stop the others; its claim lapses and it is retried.
          ctx.log.error({ err, runId: item.run.id }, 'run recovery failed unexpectedly');
        }
      }
    };
    await Promise.all(Array.from({ length: Math.min(CONCURRENCY, lost.length) }, worker));
    if (lost.length < BATCH) return outcomes;
  }
}

export async function recoverRun(ctx: AppContext, lost: LostRun): Promise<RecoveryOutcome> {
  const { run } = lost;
  const runtime = lost.runtimeId === null ? null : await ctx.agents.runtime(lost.runtimeId);
  if (!runtime || !lost.target) {
    await dropLease(ctx.db, run.id);
    return { kind: 'no_runtime' };
  }
  const adapter = ctx.runtimes.get(runtime.kind);
  const looked = await lookUp(ctx, adapter, runtime, lost);
  if (!looked.ok) {
    ctx.log.warn({ runId: run.id, failure: looked.failure.kind }, `run recovery: the runtime did not answer: ${looked.failure.message}`);
    return { kind: 'unavailable', message: looked.failure.message };
  }
  const now = ctx.clock.now();
  const found = looked.value;
  if (!found) {
    if (!adapter.supportsSyncInvoke && now.getTime() - new Date(run.created_at).getTime() > TRIGGER_NEVER_ARRIVED_MS) {
      const result = await transition(ctx.db, run.id, 'terminal', 'failed', now, { error: TRIGGER_NEVER_ARRIVED_REASON }, { via: 'recovery' });
      if (result.kind === 'applied') ctx.runWatch.publishRun(result.run);
      ctx.metrics.transitioned('recovery', result);
      return { kind: 'never_arrived' };
    }
    ctx.log.debug({ runId: run.id }, 'run recovery: not at the runtime yet');
    return { kind: 'not_found' };
  }

  // The payload match found our own run, but its record is used only if it also ran the agent's task or workflow
  // (the same check as every poll, run-ownership.ts): a foreign one is never adopted, and the run fails instead.
  const foreign = !belongsTo(lost.target, found.remote.owner);
  if (!foreign) {
    // The poller follows the run by its id from here, unless the record below already ends it. Its held call would
    // have said at once how the run ended, so the first poll comes soon (at most 10 s, the shortest interval an agent
    // may have) rather than a whole interval later; then the agent's own interval.
    const nextPollAt = new Date(now.getTime() + Math.min(lost.pollIntervalS, RECOVERED_FIRST_POLL_S) * 1000);
    const note = adapter.supportsSyncInvoke ? HELD_CALL_LOST_NOTE : null;
    const adopted = await adoptFoundRun(ctx.db, run.id, { externalRunId: found.externalRunId, note, nextPollAt }, now);
    noteUnrecordedExternalId(ctx, { id: run.id, external_run_id: adopted?.external_run_id ?? null }, found.externalRunId);
  }
  const due = {
    run: { ...run, external_run_id: found.externalRunId }, runtimeId: lost.runtimeId, target: lost.target,
    runningTimeoutMs: lost.runningTimeoutMs, pollIntervalS: lost.pollIntervalS,
  };
  const outcome = await applyRemoteStatus(ctx, due, found.remote, 'recovery');
  if ('result' in outcome && outcome.result.kind === 'applied') ctx.runWatch.publishRun(outcome.result.run);
  ctx.log.info({ runId: run.id, remote: found.remote.runtimeStatus ?? found.remote.status, outcome: outcome.kind }, 'run recovered from its runtime');
  return foreign ? { kind: 'foreign', outcome } : { kind: 'adopted', externalRunId: found.externalRunId, outcome };
}

/** By the runtime's id when the run has one, otherwise by what its payload carried. */
async function lookUp(ctx: AppContext, adapter: RuntimeAdapter, runtime: RuntimeConnection, lost: LostRun): ReturnType<RuntimeAdapter['findRun']> {
  const { run } = lost;
  if (run.external_run_id) {
    const res = await adapter.fetchStatus(runtime, run.external_run_id);
    return res.ok ? { ok: true, value: { externalRunId: run.external_run_id, remote: res.value } satisfies FoundRun } : res;
  }
  return adapter.findRun(runtime, lost.target ?? '', { runId: Number(run.id), deploymentId: ctx.deploymentId, createdAt: new Date(run.created_at) });
}
