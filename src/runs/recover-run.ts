// Recovery of runs whose runtime call this service lost (issue "Runs survive restarts"; decisions.md "Recovering
// lost runs"). A run's lease lapsed: the instance that held its n8n call, its file stream or its task trigger is
// gone. The run is looked up at its runtime by what its payload carried (the run id and this deployment's id) —
// never by guesswork, so two deployments sharing a runtime never adopt each other's executions — and finished
// from the runtime's record, or followed by the poller until it finishes.
import type { AppContext } from '../context.ts';
import type { FoundRun, RuntimeAdapter, RuntimeConnection } from '../runtimes/runtime-adapter.ts';
import { adoptFoundRun, claimLostRuns, dropLease, noteRuntime, type LostRun } from './run-leases.ts';
import { applyRemoteStatus, type PollOutcome } from './poll-run.ts';
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
 * Issue 36 item 4: a task run its runtime does not list is not declared "never arrived" — Trigger.dev's runs list
 * is served from ClickHouse, behind the main database, and misses runs waiting in its overload buffer, so absence
 * there proves nothing. The run is looked for until its queued timeout ends it; meanwhile the admin run detail
 * says why it is still queued.
 */
export const TASK_NOT_LISTED_NOTE =
  "This run's trigger answer was lost (a crash, a restart or the network); the task runtime does not list a run with its tag yet. " +
  'Its runs list may lag, so the run is looked for again every 10 s until the queued timeout ends it.';
export const taskLookupFailedNote = (message: string): string =>
  `This run's trigger answer was lost, and the task runtime could not be asked for it: ${message.slice(0, 300)}. ` +
  'It is asked again every 10 s until the queued timeout ends the run.';
export const TASK_RECOVERED_NOTE = "This run's trigger answer was lost; the run was found at the task runtime by its tag and followed from there.";
export const HELD_CALL_LOST_NOTE =
  "This instance lost its held call to n8n (a restart or a crash); the run was finished from n8n's execution record. " +
  "n8n does not keep what the Respond to Webhook node sent, so output_data is the last node's output.";

export type RecoveryOutcome =
  | { kind: 'adopted'; externalRunId: string; outcome: PollOutcome }
  | { kind: 'foreign'; outcome: PollOutcome } // found, but another task's or workflow's run: failed, not adopted
  | { kind: 'not_found' } // looked at again after RECOVERY_RETRY_MS
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
  const taskLookup = !adapter.supportsSyncInvoke && !run.external_run_id;
  if (!looked.ok) {
    ctx.log.warn({ runId: run.id, failure: looked.failure.kind }, `run recovery: the runtime did not answer: ${looked.failure.message}`);
    // A runtime whose runs list fails (Trigger.dev v4.5 without ClickHouse answers 500): the run detail says so.
    if (taskLookup) await noteRuntime(ctx.db, run.id, { note: taskLookupFailedNote(looked.failure.message), externalRunId: null });
    return { kind: 'unavailable', message: looked.failure.message };
  }
  const now = ctx.clock.now();
  const found = looked.value;
  if (!found) {
    if (taskLookup) await noteRuntime(ctx.db, run.id, { note: TASK_NOT_LISTED_NOTE, externalRunId: null });
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
    const note = adapter.supportsSyncInvoke ? HELD_CALL_LOST_NOTE : taskLookup ? TASK_RECOVERED_NOTE : null;
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
