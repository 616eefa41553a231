// Operator control of a run (decisions.md "Runs and the state machine": cancel; spec 2.2: logs are fetched from
// the runtime on demand, never stored). Shared by the admin API and, for cancel, the zone equivalent.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { findRun, type RunRow } from './runs-repo.ts';
import { transition } from './run-transitions.ts';
import { noteRuntime } from './run-leases.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { isTerminal } from './run-states.ts';
import type { Outcome, RemoteStatus, RuntimeConnection, RuntimeFailure, RuntimeLogEntry } from '../runtimes/runtime-adapter.ts';
import { foreignRunReason } from './run-ownership.ts';

/** What became of the cancel at the runtime; recorded in the audit entry. */
export type RuntimeCancel = 'cancelled' | 'failed' | 'not_supported' | 'not_found' | 'not_started_there' | 'not_owned';

export type CancelResult =
  | { kind: 'cancelled'; run: RunRow; runtimeCancel: RuntimeCancel }
  | { kind: 'already_terminal'; run: RunRow } // 409
  | { kind: 'not_found' };

export interface CancelOptions {
  via: 'admin' | 'zone';
  actorUserId?: string | null;
}

/** The run detail's and the audit entry's sentence when the work may go on at the runtime. */
const CANCEL_NOTES: Partial<Record<RuntimeCancel, string>> = {
  failed: 'The runtime did not confirm the cancel: the work may have run on there.',
  not_supported: 'The runtime cannot stop a run (n8n before its stop route, early 2026): the work may have run on there to its end.',
  not_found: 'The runtime showed no record of this run when it was cancelled: if it got there later, the work may have run on.',
  not_owned: "The runtime run belongs to another task or workflow than this agent's: it was not cancelled there, only this record was.",
};

/**
 * Cancels at the runtime where it can (Trigger.dev cancel, n8n stop — an n8n run without a known execution is
 * looked up first; a held n8n call on this instance is aborted), then writes `cancelled` through the guarded
 * transition. A run that became terminal meanwhile is left alone: the first terminal write wins, and the caller
 * gets already_terminal. Where the work may go on at the runtime, the run detail and the audit entry say so.
 */
export async function cancelRun(ctx: AppContext, runId: number, opts: CancelOptions): Promise<CancelResult> {
  const run = await findRun(ctx.db, runId);
  if (!run) return { kind: 'not_found' };
  if (isTerminal(run.status)) return { kind: 'already_terminal', run };

  const { agent, runtime } = await runtimeOf(ctx, run);
  // The held call's answer (n8n's "cancelled manually" to the stop below) then writes nothing: this cancel
  // writes the status, with its own reason.
  const heldHere = ctx.heldCalls.abort(runId, 'cancel');
  // Only a run this service started carries our payload at the runtime, so only such a run can be looked up.
  const startedHere = run.source !== 'ingest' && run.source !== 'register';
  const atRuntime = runtime ? await cancelAtRuntime(ctx, runtime, run, agent?.target ?? null, startedHere) : null;
  let runtimeCancel: RuntimeCancel = atRuntime?.outcome ?? 'not_started_there';
  if (heldHere && runtimeCancel === 'not_started_there') runtimeCancel = 'not_supported';

  const now = ctx.clock.now();
  // The admin token is the platform admin's; a signed-in user may be an org admin (who they are is in the audit entry).
  const reason = opts.via !== 'admin' ? 'Run cancelled by a user' : opts.actorUserId ? 'Run cancelled by an admin' : 'Run cancelled by a platform admin';
  // A run looked up at the runtime keeps the id it was found under (logs, the operator's own look).
  const result = await transition(ctx.db, runId, 'terminal', 'cancelled', now, { error: reason, externalRunId: atRuntime?.externalRunId ?? null }, { via: 'admin' });
  if (result.kind === 'not_found') return { kind: 'not_found' };
  // 'noop': the runtime's own answer to the cancel (n8n "cancelled manually") got there first — still cancelled.
  if (result.kind === 'backward') return { kind: 'already_terminal', run: result.run };
  if (result.kind === 'applied') ctx.runWatch.publishRun(result.run);
  ctx.metrics.transitioned('admin', result);
  const note = CANCEL_NOTES[runtimeCancel] ?? null;
  // Kept even when another writer ended the run first (an instance holding the call got n8n's answer).
  const foundAs = atRuntime?.externalRunId && !result.run.external_run_id ? atRuntime.externalRunId : null;
  if (note || foundAs) await noteRuntime(ctx.db, runId, { note, externalRunId: foundAs });
  await appendAudit(
    ctx.db,
    {
      action: 'run.cancelled', actorUserId: opts.actorUserId ?? null, agentId: run.agent_id, runId,
      details: { via: opts.via, runtime_cancel: runtimeCancel, ...(note ? { runtime_note: note } : {}) },
    },
    now,
  );
  const row = { ...result.run, runtime_note: note ?? result.run.runtime_note, external_run_id: result.run.external_run_id ?? foundAs };
  return { kind: 'cancelled', run: row, runtimeCancel };
}

/**
 * Stops the run at its runtime: by its external id, or, for one that has none yet, by looking it up first (only a
 * run started here carries our payload). Only a runtime run of the agent's own task or workflow is ever stopped
 * (issue 12): the run is read first, and one of another is left alone (`not_owned`).
 */
async function cancelAtRuntime(
  ctx: AppContext, runtime: RuntimeConnection, run: RunRow, target: string | null, lookUp: boolean,
): Promise<{ outcome: RuntimeCancel; externalRunId: string | null }> {
  const adapter = ctx.runtimes.get(runtime.kind);
  let externalRunId = run.external_run_id;
  let remote: Outcome<RemoteStatus> | null = null;
  if (!externalRunId && target && lookUp) {
    const found = await adapter.findRun(runtime, target, { runId: Number(run.id), deploymentId: ctx.deploymentId, createdAt: new Date(run.created_at) });
    if (!found.ok) return failedAtRuntime(ctx, run, found.failure, 'looking the run up at the runtime');
    if (!found.value) return { outcome: 'not_found', externalRunId: null };
    externalRunId = found.value.externalRunId;
    remote = { ok: true, value: found.value.remote };
  }
  if (!externalRunId) return { outcome: 'not_started_there', externalRunId: null };
  remote ??= await adapter.fetchStatus(runtime, externalRunId);
  // A run the runtime does not know (404) was not found there; any other failure leaves its owner unknown.
  if (!remote.ok) return failedAtRuntime(ctx, run, remote.failure, 'reading the run at the runtime', remote.failure.httpStatus === 404);
  const foreign = foreignRunReason(target, remote.value.owner, externalRunId);
  if (foreign) {
    ctx.log.warn({ runId: run.id }, `cancel: not cancelled at the runtime: ${foreign}`);
    return { outcome: 'not_owned', externalRunId: null };
  }
  const res = await adapter.cancel(runtime, externalRunId);
  if (!res.ok) return failedAtRuntime(ctx, run, res.failure, 'cancel at the runtime');
  return { outcome: 'cancelled', externalRunId: run.external_run_id ? null : externalRunId };
}

function failedAtRuntime(
  ctx: AppContext, run: RunRow, failure: RuntimeFailure, step: string, notFound = false,
): { outcome: RuntimeCancel; externalRunId: null } {
  ctx.log.warn({ runId: run.id, failure: failure.kind }, `cancel: ${step} failed: ${failure.message}`);
  return { outcome: failure.kind === 'not_supported' ? 'not_supported' : notFound ? 'not_found' : 'failed', externalRunId: null };
}

export type LogsResult =
  | { kind: 'ok'; logs: RuntimeLogEntry[] }
  | { kind: 'upstream_failed'; message: string; runId: number }
  | { kind: 'not_owned'; message: string; runId: number }
  | { kind: 'not_found' };

/**
 * Spec 2.2: logs come from the runtime on demand. A run the runtime never knew has none: an empty list. The
 * runtime run is read first and its logs are shown only when it is the agent's own (issue 12, run-ownership.ts): a
 * run registered under another task's external id would otherwise show that task's logs.
 */
export async function fetchRunLogs(ctx: AppContext, runId: number): Promise<LogsResult> {
  const run = await findRun(ctx.db, runId);
  if (!run) return { kind: 'not_found' };
  const { agent, runtime } = await runtimeOf(ctx, run);
  const externalRunId = run.external_run_id;
  if (!runtime || !externalRunId) return { kind: 'ok', logs: [] };
  const adapter = ctx.runtimes.get(runtime.kind);
  const remote = await adapter.fetchStatus(runtime, externalRunId);
  if (!remote.ok) return { kind: 'upstream_failed', message: `the runtime did not say whose run it is: ${remote.failure.message}`, runId };
  const foreign = foreignRunReason(agent?.target ?? null, remote.value.owner, externalRunId);
  if (foreign) return { kind: 'not_owned', message: `no logs: ${foreign}`, runId };
  const res = await adapter.fetchLogs(runtime, externalRunId);
  if (!res.ok) return { kind: 'upstream_failed', message: `the runtime did not return logs: ${res.failure.message}`, runId };
  return { kind: 'ok', logs: res.value };
}

/** The run's agent and its runtime, from the per-instance cache. */
async function runtimeOf(ctx: AppContext, run: RunRow): Promise<{ agent: AgentRow | null; runtime: RuntimeConnection | null }> {
  const agent = await ctx.agents.get(run.agent_id);
  return { agent, runtime: agent?.runtime_id ? await ctx.agents.runtime(agent.runtime_id) : null };
}
