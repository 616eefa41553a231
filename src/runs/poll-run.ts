// Status polling (spec part 1 "the service polling the runtime", part 3 "poll of runtime"): one claimed run,
// its runtime's answer, and what that answer means for the run. Every write goes through `transition`, so a
// callback or an alert that got there first makes the poll's write a silent no-op (first terminal write wins).
import type { AppContext } from '../context.ts';
import { deferPoll, releasePollLease, type DuePoll } from './poll-claims.ts';
import { transition, type RunPatch, type TransitionResult } from './run-transitions.ts';

import type { RemoteStatus, RuntimeConnection } from '../runtimes/runtime-adapter.ts';
import type { TransitionPath } from '../metrics/metrics.ts';
import type { TerminalStatus } from './run-states.ts';
import { outputsOf } from './run-output.ts';
import { RUNNING_TIMEOUT_REASON } from './timeout-reasons.ts';
import { foreignRunReason } from './run-ownership.ts';

export type PollOutcome =
  | { kind: 'terminal'; result: TransitionResult }
  | { kind: 'foreign'; result: TransitionResult } // the runtime run is another task's or workflow's: failed, nothing applied
  | { kind: 'started'; result: TransitionResult }
  | { kind: 'timed_out'; result: TransitionResult }
  | { kind: 'unchanged'; remote: string }
  | { kind: 'unavailable'; message: string } // the runtime did not answer usefully; the next tick tries again
  | { kind: 'no_runtime' };

/**
 * A run the runtime says it does not have is taken for replica lag this long after its creation here (issue 36 item
 * 3): Trigger.dev reads runs from a replica, a moment behind the trigger. Later the 404 is final — a key of another
 * environment, a wrong base URL, a registered id that never existed — and the run ends with that reason instead of
 * being polled until a timeout.
 */
export const RUN_NOT_VISIBLE_GRACE_MS = 30_000;

export const runNotFoundReason = (externalRunId: string): string =>
  `the task runtime has no run "${externalRunId.slice(0, 100)}" (HTTP 404): its key is of another environment or project, its base URL is wrong, or the id never existed there`;

/**
 * The runtime's own words for "paused, not executing" (Trigger.dev WAITING, or FROZEN in the legacy vocabulary;
 * n8n `waiting`). The adapters map these to `running`; spec part 3 rules 3 and 4 need the difference.
 */
const PAUSED_UPSTREAM = new Set(['WAITING', 'FROZEN', 'waiting']);

export async function pollRun(
  ctx: AppContext,
  due: DuePoll,
  runtime: RuntimeConnection | null,
): Promise<PollOutcome> {
  const { run } = due;
  if (!runtime || !run.external_run_id) return { kind: 'no_runtime' };
  const adapter = ctx.runtimes.get(runtime.kind);
  const res = await adapter.fetchStatus(runtime, run.external_run_id);
  if (!res.ok) {
    const f = res.failure;
    if (f.notFound && ctx.clock.now().getTime() - new Date(run.created_at).getTime() >= RUN_NOT_VISIBLE_GRACE_MS) {
      const now = ctx.clock.now();
      const result = await transition(ctx.db, run.id, 'terminal', 'failed', now, { error: runNotFoundReason(run.external_run_id) }, { via: 'poll' });
      ctx.metrics.transitioned('poll', result);
      if (result.kind !== 'applied') await releasePollLease(ctx.db, run.id);
      else ctx.runWatch.publishRun(result.run);
      ctx.log.warn({ runId: run.id, runtimeId: runtime.id }, `status poll: ${f.message}; the run is failed`);
      return { kind: 'terminal', result };
    }
    // A 404 right after the trigger is replica lag; a blip or a 429 is retried too (a 429 at its reset time).
    if (f.retryAt) await deferPoll(ctx.db, run.id, f.retryAt);
    else await releasePollLease(ctx.db, run.id);
    const level = f.retryable || f.notFound ? 'debug' : 'warn';
    ctx.log[level]({ runId: run.id, failure: f.kind, httpStatus: f.httpStatus }, `status poll failed: ${f.message}`);
    return { kind: 'unavailable', message: f.message };
  }
  const outcome = await applyRemoteStatus(ctx, due, res.value);
  // A terminal write cleared next_poll_at already; anything else may be polled again at next_poll_at.
  if (!('result' in outcome) || outcome.result.kind !== 'applied' || outcome.kind === 'started') await releasePollLease(ctx.db, run.id);
  if ('result' in outcome && outcome.result.kind === 'applied') ctx.runWatch.publishRun(outcome.result.run);
  return outcome;
}

/**
 * What one remote status means for the run (runtimes.md mappings; spec part 3 rules 2–4), written and counted. The
 * poller and a synchronous wait's status reads both come through here (`poll`), and recovery's (`recovery`).
 */
export async function applyRemoteStatus(ctx: AppContext, due: DuePoll, remote: RemoteStatus, path: TransitionPath = 'poll'): Promise<PollOutcome> {
  const outcome = await moveByRemoteStatus(ctx, due, remote, path);
  if ('result' in outcome) ctx.metrics.transitioned(outcome.kind === 'timed_out' ? 'timeout' : path, outcome.result);
  return outcome;
}

async function moveByRemoteStatus(ctx: AppContext, due: DuePoll, remote: RemoteStatus, via: TransitionPath): Promise<PollOutcome> {
  const { run } = due;
  const now = ctx.clock.now();
  // Issue 12: the runtime's answer counts only for a run of the agent's own task or workflow. Any other one (an
  // id registered for another agent's run) fails this run, and none of its status or output is taken.
  const foreign = foreignRunReason(due.target, remote.owner, run.external_run_id ?? '');
  if (foreign) {
    ctx.log.warn({ runId: run.id, runtimeId: due.runtimeId }, `status poll: ${foreign}`);
    return { kind: 'foreign', result: await transition(ctx.db, run.id, 'terminal', 'failed', now, { error: foreign }, { via }) };
  }
  switch (remote.status) {
    case 'completed':
    case 'failed':
    case 'cancelled':
      return { kind: 'terminal', result: await transition(ctx.db, run.id, 'terminal', remote.status, now, terminalPatch(remote.status, remote, run.created_at, now), { via }) };
    case 'running': {
      if (run.status === 'queued') {
        return { kind: 'started', result: await transition(ctx.db, run.id, 'started', 'running', now, {}, { via }) };
      }
      // Rule 3: a run paused upstream is never failed for its pause; rule 4: one that executes upstream while
      // it says `waiting` here is. Measured from the original started_at either way (rule 2).
      const pausedUpstream = run.status === 'waiting' && PAUSED_UPSTREAM.has(remote.runtimeStatus ?? '');
      const started = run.started_at ? new Date(run.started_at).getTime() : null;
      if (!pausedUpstream && started !== null && now.getTime() - started > due.runningTimeoutMs) {
        const result = await transition(ctx.db, run.id, 'terminal', 'failed', now, { error: RUNNING_TIMEOUT_REASON }, { via: 'timeout' });
        return { kind: 'timed_out', result };
      }
      return { kind: 'unchanged', remote: remote.runtimeStatus ?? remote.status };
    }
    case 'queued':
    case 'unknown':
      return { kind: 'unchanged', remote: remote.runtimeStatus ?? remote.status };
  }
}

/** Spec part 3 "stores output_data, duration_ms, outputs": the task's return value and wall-clock duration. */
function terminalPatch(status: TerminalStatus, remote: RemoteStatus, createdAt: Date, now: Date): RunPatch {
  const patch: RunPatch = {};
  // The runtime knows when the run really started and finished; a poll only learns it later. Its times are kept
  // when they are consistent with ours (created_at ≤ started ≤ finished ≤ now); a skewed runtime clock falls back
  // to the moment of the poll. started_at is still stamped only if the run has none yet.
  const { startedAt, finishedAt } = remote;
  if (startedAt && finishedAt && createdAt.getTime() <= startedAt.getTime() && startedAt <= finishedAt && finishedAt <= now) {
    patch.startedAt = startedAt;
    patch.completedAt = finishedAt;
  }
  if (typeof remote.durationMs === 'number' && remote.durationMs >= 0) patch.durationMs = remote.durationMs;
  if (status === 'completed') {
    patch.outputData = remote.output ?? null;
    patch.outputs = outputsOf(remote.output);
  } else if (remote.error) {
    patch.error = remote.error;
  } else if (status === 'failed') {
    patch.error = `Run ${remote.runtimeStatus ? `ended with status ${remote.runtimeStatus}` : 'failed'} in the runtime`;
  }
  return patch;
}
