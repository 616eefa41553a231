// Start a run and hold the caller until it ends or the wait window closes (spec 4.2, 4.7, 8.3). Shared by
// trigger-and-wait, webhook-and-wait and the zone equivalents; each maps the outcome to its own responses.
//
// decisions.md "the wait window", per runtime kind (told apart by whether invoke() holds a call open):
// - workflow (held call): at the window's end a run still `queued` has shown no sign of life (no answer, no
//   callback): it is failed (504) in one guarded write, so a late answer becomes a no-op; a run that called back
//   (`running`/`waiting`) is 202 and its held call goes on in the background, bounded by the running timeout.
// - task: never 504. The run is polled while the caller waits; at the window's end it is 202.
import type { AppContext } from '../context.ts';
import type { RunHead, RunRow } from '../runs/runs-repo.ts';
import { isOverLimit, type OverLimit } from '../rate-limits/rate-guard.ts';
import { transition, type TransitionResult } from '../runs/run-transitions.ts';
import { isTerminal } from '../runs/run-states.ts';
import { isDatabaseUnavailable } from '../storage/db-unavailable.ts';
import { invokePrepared, prepareRun, type PreparedRun, type StartRunArgs, type StartRunResult } from '../runs/start-run.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { watchTerminal, type RunWait } from './await-run.ts';
import { pollTaskWhileWaiting, readTaskStatus, withTaskReturnValue, type RemoteRead } from './task-wait.ts';

export type SyncOutcome =
  /** Terminal within the window (any terminal status). */
  | { kind: 'finished'; run: RunRow }
  /**
   * The window elapsed; the run continues. `run` is the row read at the deadline or, when the database could not
   * be read then, the run as this request last knew it.
   */
  | { kind: 'timed_out'; run: RunHead }
  /** Workflow runtime, no sign of life within the window: the run is now `failed`. */
  | { kind: 'no_answer'; run: RunRow }
  /** The runtime could not be invoked; the run is already `failed` with `reason`. */
  | { kind: 'not_started'; run: RunHead; reason: string }
  /** The caller went away first. Nothing was written: the run goes on as if triggered asynchronously. */
  | { kind: 'caller_gone'; runId: number }
  /** The request is over its rate limit: no run was created. */
  | OverLimit;

export interface SyncWaitOptions {
  windowMs: number;
  /** Fires when the caller disconnects; it ends the wait, never the run. */
  signal?: AbortSignal;
}

/** The reason stored on a run failed by a missed window (spec part 3). */
export const NO_ANSWER_REASON = 'the runtime did not respond within the wait window';

export async function startAndAwait(ctx: AppContext, args: StartRunArgs, opts: SyncWaitOptions): Promise<SyncOutcome> {
  // The window starts with the request, so invoking the runtime is inside it.
  const deadline = Date.now() + opts.windowMs;
  const prepared = await prepareRun(ctx, args);
  if (isOverLimit(prepared)) return prepared;
  const runId = prepared.run.id;
  // Subscribed before the runtime learns of the run: no end can be missed, so no first look is needed.
  const wait = watchTerminal(ctx, runId, { deadline, signal: opts.signal, fresh: true });
  let started: StartRunResult;
  try {
    started = await invokePrepared(ctx, args.agent, prepared);
  } catch (err) {
    wait.cancel();
    throw err;
  }
  if (!started.ok) {
    wait.cancel();
    return { kind: 'not_started', run: started.run, reason: started.reason };
  }

  if (started.invoked.answer === undefined) {
    // Task runtime. Only what polling and the return value need is kept across the wait, not the input or payload.
    const remote = { runtime: prepared.runtime, adapter: prepared.adapter };
    const run = { ...started.run, external_run_id: started.invoked.externalRunId };
    return awaitTaskRun(ctx, { wait, run, agent: args.agent, remote, deadline });
  }

  const res = await wait.outcome;
  if (res.kind === 'aborted') return { kind: 'caller_gone', runId };
  if (res.kind === 'not_found') throw new Error(`run ${runId} vanished while waited for`);
  if (res.kind === 'terminal') return { kind: 'finished', run: res.run };
  // Nothing can be concluded, and nothing written, while the database is out: the run goes on, bounded by its
  // held call and the timeouts.
  if (res.kind === 'unknown') return { kind: 'timed_out', run: started.run };
  // Handed back at shutdown, the window did not elapse: the run's silence proves nothing yet.
  if (res.run.status !== 'queued' || res.handedBack) return { kind: 'timed_out', run: res.run };
  return failSilentWorkflowRun(ctx, res.run);
}

export interface TaskRunWait {
  /** Subscribed before anything could end the run (watchTerminal). */
  wait: RunWait;
  /** The run as last known, with the runtime's id for it. */
  run: RunHead;
  agent: Pick<AgentRow, 'target' | 'running_timeout_ms'>;
  remote: Pick<PreparedRun, 'runtime' | 'adapter'>;
  deadline: number;
}

/**
 * A task run while a caller waits (spec 4.2 "Task runtime"): polled meanwhile; the callback, the background poller
 * or an alert may also end it. Finished, its output_data is the task's return value.
 */
export async function awaitTaskRun(ctx: AppContext, w: TaskRunWait): Promise<SyncOutcome> {
  const { run, remote } = w;
  const externalRunId = run.external_run_id;
  const stopPolling = new AbortController();
  const poll = pollTaskWhileWaiting(ctx, { run, target: w.agent.target, runningTimeoutMs: w.agent.running_timeout_ms, ...remote }, stopPolling.signal);
  // A completion reported to this instance: the return value is read while the completion is written, not after.
  let earlyRead: Promise<RemoteRead> | undefined;
  const unhear = ctx.runWatch.watchCompletion(run.id, () => {
    earlyRead ??= readTaskStatus(remote, externalRunId);
  });
  let res;
  try {
    res = await w.wait.outcome;
  } finally {
    // With a reason: abort() without one builds a DOMException, stack and all (about 30 µs on every wake; bench
    // profile, issue 15). The polling reads only `aborted`.
    stopPolling.abort('the wait is over');
    unhear();
  }
  if (res.kind === 'aborted') return { kind: 'caller_gone', runId: run.id };
  if (res.kind === 'not_found') throw new Error(`run ${run.id} vanished while waited for`);
  if (res.kind === 'timeout') return { kind: 'timed_out', run: res.run };
  if (res.kind === 'unknown') return { kind: 'timed_out', run };
  const finished = (await poll.appliedFromRuntime()) ? res.run : await withTaskReturnValue(ctx, remote, res.run, w.deadline, externalRunId, earlyRead);
  return { kind: 'finished', run: finished };
}

/** Spec part 3 / decisions.md: fails the run only if it is still queued at this instant (one guarded write). */
async function failSilentWorkflowRun(ctx: AppContext, run: RunRow): Promise<SyncOutcome> {
  const runId = run.id;
  let result: TransitionResult;
  try {
    result = await transition(ctx.db, runId, 'no_sign_of_life', 'failed', ctx.clock.now(), { error: NO_ANSWER_REASON }, { via: 'sync' });
  } catch (err) {
    // The database went away since the deadline's read: as above, the run goes on and the caller gets its 202.
    if (!isDatabaseUnavailable(err)) throw err;
    ctx.log.warn({ err, runId }, 'a silent workflow run could not be failed at the end of its window');
    return { kind: 'timed_out', run };
  }
  if (result.kind === 'not_found') throw new Error(`run ${runId} vanished while waited for`);
  if (result.kind === 'applied') {
    ctx.runWatch.publishRun(result.run);
    ctx.metrics.transitioned('sync', result);
    // The held call would be ended by the terminal wake-up anyway; ending it here frees the socket at once.
    ctx.heldCalls.abort(runId, 'window');
    ctx.log.warn({ runId }, 'workflow runtime showed no sign of life within the wait window; run failed');
    return { kind: 'no_answer', run: result.run };
  }
  // Refused: between the deadline read and this write the run called back (goes on) or ended (answer it).
  return isTerminal(result.run.status) ? { kind: 'finished', run: result.run } : { kind: 'timed_out', run: result.run };
}
