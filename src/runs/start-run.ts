// Starting a run on a platform agent's runtime (spec 3 "(none) → queued, runtime invoked", 2.3 task payload).
// Every starting endpoint (trigger, the synchronous ones, webhooks, zones) goes through prepareRun, and all but
// the download through startRun, so the payload and the failure handling are the same everywhere.
import type { AppContext } from '../context.ts';
import { activeTraceparent } from '../tracing/spans.ts';
import { saveRunTrace } from './run-traces.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { isOverLimit, type OverLimit, type RateGuard } from '../rate-limits/rate-guard.ts';
import { insertRun, recordTriggered, type RunHead, type RunInsertCompanion, type RunRow } from './runs-repo.ts';
import { transition, type TransitionResult } from './run-transitions.ts';
import { mintRunCredentials } from '../agents/agent-tokens.ts';
import { errors } from '../errors.ts';
import type { Invoked, RuntimeAdapter, RuntimeConnection, RuntimeFailure, TaskPayload, WorkflowAnswer } from '../runtimes/runtime-adapter.ts';
import { outputsOf } from './run-output.ts';
import type { AbortReason, HeldSettlement } from './held-workflow-calls.ts';
import { RUNNING_TIMEOUT_REASON } from './timeout-reasons.ts';
import type { StartedSource } from './run-sources.ts';

export type { HeldSettlement } from './held-workflow-calls.ts';

export interface StartRunArgs {
  agent: AgentRow;
  /** What the task receives as payload.input. */
  input: unknown;
  /** What runs.input stores if different (webhook redaction); default = input. */
  storedInput?: unknown;
  createdBy: string | null;
  source: StartedSource;
  /** The request's rate-limit count, made by the run's insert (over the limit nothing is written: OverLimit). */
  guard?: RateGuard | null;
  /** The request's Idempotency-Key claim, made by the run's insert too (runs/idempotency.ts). */
  keyClaim?: RunInsertCompanion | null;
  /** An admin replay (issue 14): the run this one starts again, linked by the insert. */
  replayOf?: number | null;
}

export interface PreparedRun {
  run: RunHead;
  payload: TaskPayload;
  runtime: RuntimeConnection;
  adapter: RuntimeAdapter;
}

export type StartRunResult =
  | {
      ok: true;
      run: RunHead;
      invoked: Invoked;
      prepared: PreparedRun;
      /** Workflow runtimes: resolves once the held answer has been applied to the run (never rejects). */
      settled?: Promise<HeldSettlement>;
    }
  | { ok: false; run: RunHead; reason: string }; // the run is already written `failed` with that reason

/**
 * Inserts the queued run, mints the credentials token if the agent has active connections, builds spec 2.3's
 * payload. Throws 422 agent_unavailable, writing nothing, when the agent names no usable runtime; a request over
 * its rate limit comes back as OverLimit, with nothing written.
 */
export async function prepareRun(ctx: AppContext, args: StartRunArgs): Promise<PreparedRun | OverLimit> {
  const { agent } = args;
  const runtime = agent.runtime_id === null ? null : await ctx.agents.runtime(agent.runtime_id);
  if (!runtime || !agent.target) throw errors.agentUnavailable('agent has no runtime or target configured');
  const adapter = ctx.runtimes.get(runtime.kind);
  const connectionIds = await ctx.agents.connectionIds(agent.id);
  const now = ctx.clock.now();
  const run = await insertRun(ctx.db, {
    agentId: agent.id,
    status: 'queued',
    source: args.source,
    now,
    input: args.storedInput === undefined ? args.input : args.storedInput,
    createdBy: args.createdBy,
    invokeLeaseUntil: ctx.leases.firstLease(now),
    replayOf: args.replayOf,
  }, args.guard ?? null, args.keyClaim);
  if (isOverLimit(run)) return run;
  ctx.metrics.entered('start', run.status);
  // The request's trace context (the caller's, or its span's), for the run's later work: only when there is one.
  const traceparent = activeTraceparent();
  if (traceparent) await saveRunTrace(ctx.db, run.id, traceparent);
  // Built field by field: the agent key is never part of a payload (spec 2.3). The deployment id lets recovery
  // find this very run at a runtime other deployments may share (decisions.md "Recovering lost runs"); the URLs
  // tell the task where to report and resolve (decisions.md "Task payload").
  const payload: TaskPayload = {
    runId: run.id,
    deploymentId: ctx.deploymentId,
    serviceUrl: ctx.config.publicUrl,
    callbackUrl: `${ctx.config.publicUrl}/api/runs/${run.id}/callback`,
    input: args.input ?? {},
  };
  // Spec 4.4 (and 2.3): connectionIds and credentialsToken travel together or not at all.
  if (Object.keys(connectionIds).length > 0) {
    // Issued at the run's creation: a /register repeating this run's external id answers this same token.
    const { token } = await mintRunCredentials(ctx, agent, run.id, run.created_at);
    payload.connectionIds = connectionIds;
    payload.credentialsToken = token;
  }
  return { run, payload, runtime, adapter };
}

/**
 * prepareRun + adapter.invoke. On invoke failure the run is failed (reason e.g. "runtime unreachable: …").
 * Task runtimes: the run stays queued with its external run id and a first poll scheduled. Workflow runtimes:
 * the run stays queued until first sign of life (decisions.md "The wait window"); the held answer ends it.
 */
export async function startRun(ctx: AppContext, args: StartRunArgs): Promise<StartRunResult | OverLimit> {
  const prepared = await prepareRun(ctx, args);
  return isOverLimit(prepared) ? prepared : invokePrepared(ctx, args.agent, prepared);
}

export async function invokePrepared(ctx: AppContext, agent: AgentRow, prepared: PreparedRun): Promise<StartRunResult> {
  const { run, payload, runtime, adapter } = prepared;
  // Only a workflow runtime's call is held open (until its answer). A run can be queued up to the queued
  // timeout, then run up to the running timeout: the held call's backstop.
  const held = adapter.supportsSyncInvoke ? ctx.heldCalls.hold(run.id, ctx.config.queuedTimeoutMs + agent.running_timeout_ms) : null;
  // Until the call's outcome is recorded this instance holds it; if it dies first, recovery takes the run.
  const releaseLease = ctx.leases.hold(run.id);
  const res = await adapter.invoke({ runtime, target: agent.target ?? '', payload, signal: held?.signal }).catch((err: unknown) => {
    releaseLease();
    throw err;
  });
  if (!res.ok) {
    held?.release();
    if (res.failure.maybeStarted && !adapter.supportsSyncInvoke) {
      // Issue 36 item 2: the runtime may have started it (its answer was lost and could not be had again in time).
      // Failing the run now could leave its task running on: the lease is handed back instead, and recovery finds
      // the run by its tag (or the queued timeout ends it).
      releaseLease();
      await ctx.leases.handBack([run.id]);
      ctx.log.warn({ runId: run.id, agentId: run.agent_id }, `runtime trigger answer lost; the run is left to recovery: ${res.failure.message}`);
      return { ok: true, run, invoked: { externalRunId: null }, prepared };
    }
    releaseLease();
    return failStart(ctx, run, invokeFailureReason(res.failure));
  }
  const invoked = res.value;
  if (!invoked.answer) {
    held?.release();
    const now = ctx.clock.now();
    const nextPoll = new Date(now.getTime() + agent.poll_interval_s * 1000);
    // A failed write here leaves the lease to lapse: recovery then finds the run at the runtime by its tag.
    const triggered = await recordTriggered(ctx.db, run.id, invoked.externalRunId, nextPoll, now).finally(releaseLease);
    if (triggered) noteUnrecordedExternalId(ctx, { id: run.id, ...triggered }, invoked.externalRunId);
    return { ok: true, run: { ...run, ...triggered }, invoked, prepared };
  }

  if (!held) throw new Error(`the ${runtime.kind} adapter answered a call it does not hold`);
  const settled = invoked.answer
    .then(async (answer) => {
      const abortReason = held.abortReason();
      held.answered(); // the terminal write below must not abort a call that is already over
      // Handed back at shutdown: the answer never came; the run's lease lapses now, for recovery to take it.
      if (abortReason === 'shutdown') await ctx.leases.handBack([run.id]);
      return applyWorkflowAnswer(ctx, run.id, answer, abortReason);
    })
    .catch((err: unknown): HeldSettlement => {
      // A database error while recording the answer: the lease lapses and recovery finishes the run from n8n.
      ctx.log.error({ err, runId: run.id }, 'could not record the workflow answer');
      return { answer: { status: 'failed', output: null, error: 'answer not recorded', externalRunId: null }, result: null };
    })
    .finally(() => {
      held.release();
      releaseLease();
    });
  held.settled = settled;
  return { ok: true, run, invoked, prepared, settled };
}

/**
 * A held workflow answer as a terminal transition (first terminal write wins; a late answer after a timeout or a
 * cancel is a silent no-op). An answer ended by our own abort writes nothing, except the running-timeout
 * backstop, whose run has by definition run too long.
 */
export async function applyWorkflowAnswer(
  ctx: AppContext,
  runId: number,
  answer: WorkflowAnswer,
  abortReason: AbortReason | null,
): Promise<HeldSettlement> {
  const now = ctx.clock.now();
  let result: TransitionResult | null = null;
  if (answer.aborted || abortReason !== null) {
    if (abortReason === 'timeout') result = await transition(ctx.db, runId, 'terminal', 'failed', now, { error: RUNNING_TIMEOUT_REASON }, { via: 'timeout' });
  } else if (answer.status === 'completed') {
    result = await transition(ctx.db, runId, 'terminal', 'completed', now, {
      outputData: answer.output,
      outputs: outputsOf(answer.output),
      externalRunId: answer.externalRunId,
    }, { via: 'sync' });
  } else {
    result = await transition(ctx.db, runId, 'terminal', answer.status, now, {
      error: answer.error ?? `workflow run ${answer.status}`,
      externalRunId: answer.externalRunId,
    }, { via: 'sync' });
  }
  ctx.metrics.transitioned(abortReason === 'timeout' ? 'timeout' : 'sync', result);
  if (result?.kind === 'applied') {
    ctx.runWatch.publishRun(result.run);
    noteUnrecordedExternalId(ctx, result.run, answer.externalRunId);
  }
  return { answer, result };
}

/**
 * The runtime named an id the runs table could not take (another run of the agent has it, or it is empty or over
 * 255 characters): the run's result was kept without it (decisions.md "Runtimes"); an operator should know.
 */
export function noteUnrecordedExternalId(ctx: AppContext, run: Pick<RunRow, 'id' | 'external_run_id'>, offered: string | null | undefined): void {
  if (!offered || run.external_run_id !== null) return;
  ctx.log.warn({ runId: run.id, externalRunId: offered.slice(0, 80), length: offered.length }, "the runtime's id for this run was not recorded: another run of the agent has it, or it does not fit");
}

async function failStart(ctx: AppContext, run: RunHead, reason: string): Promise<StartRunResult> {
  const result = await transition(ctx.db, run.id, 'terminal', 'failed', ctx.clock.now(), { error: reason }, { via: 'start' });
  if (result.kind === 'applied') ctx.runWatch.publishRun(result.run);
  ctx.metrics.transitioned('start', result);
  const row = result.kind === 'not_found' ? run : result.run;
  // Not logged here: the request's one line names the run and the reason (http/request-log.ts).
  return { ok: false, run: row, reason };
}

/** A short reason for the run's `error` and the 500 body. Adapter messages never carry secrets or URLs. */
export function invokeFailureReason(f: RuntimeFailure): string {
  switch (f.kind) {
    case 'unreachable':
    case 'timeout':
      return `runtime unreachable: ${f.message}`;
    case 'rejected':
      return `runtime refused the run: ${f.message}`;
    case 'bad_response':
      return `runtime answered unexpectedly: ${f.message}`;
    case 'not_supported':
      return `runtime cannot start this run: ${f.message}`;
  }
}
