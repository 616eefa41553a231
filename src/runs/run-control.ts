// Operator control of a run (decisions.md "Runs and the state machine": cancel; spec 2.2: logs are fetched from
// the runtime on demand, never stored). Shared by the admin API and, for cancel, the zone equivalent.
import type { AppContext } from '../context.ts';
import { findRun, type RunRow } from './runs-repo.ts';
import { transition } from './run-transitions.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { isTerminal } from './run-states.ts';
import type { RuntimeConnection } from '../runtimes/runtime-adapter.ts';

/** What became of the cancel at the runtime; recorded in the audit entry. */
export type RuntimeCancel = 'cancelled' | 'failed' | 'not_supported' | 'not_started_there';

export type CancelResult =
  | { kind: 'cancelled'; run: RunRow; runtimeCancel: RuntimeCancel }
  | { kind: 'already_terminal'; run: RunRow } // 409
  | { kind: 'not_found' };

export interface CancelOptions {
  via: 'admin' | 'zone';
  actorUserId?: string | null;
}

/**
 * Cancels at the runtime where it can (Trigger.dev cancel, n8n stop; a held n8n call on this instance is
 * aborted), then writes `cancelled` through the guarded transition. A run that became terminal meanwhile is
 * left alone: the first terminal write wins, and the caller gets already_terminal.
 */
export async function cancelRun(ctx: AppContext, runId: number, opts: CancelOptions): Promise<CancelResult> {
  const run = await findRun(ctx.db, runId);
  if (!run) return { kind: 'not_found' };
  if (isTerminal(run.status)) return { kind: 'already_terminal', run };

  const runtime = await runtimeOf(ctx, run);
  let runtimeCancel: RuntimeCancel = 'not_started_there';
  if (runtime && run.external_run_id) {
    const res = await ctx.runtimes.get(runtime.kind).cancel(runtime, run.external_run_id);
    runtimeCancel = res.ok ? 'cancelled' : res.failure.kind === 'not_supported' ? 'not_supported' : 'failed';
    if (!res.ok) ctx.log.warn({ runId, failure: res.failure.kind }, `cancel at the runtime failed: ${res.failure.message}`);
  }
  // The held call's answer then writes nothing: this cancel writes the status.
  if (ctx.heldCalls.abort(runId, 'cancel') && runtimeCancel === 'not_started_there') runtimeCancel = 'not_supported';

  const now = ctx.clock.now();
  const reason = opts.via === 'admin' ? 'Run cancelled by a platform admin' : 'Run cancelled by a user';
  const result = await transition(ctx.db, runId, 'terminal', 'cancelled', now, { error: reason });
  if (result.kind === 'not_found') return { kind: 'not_found' };
  // 'noop': the runtime's own answer to the cancel (n8n "cancelled manually") got there first — still cancelled.
  if (result.kind === 'backward') return { kind: 'already_terminal', run: result.run };
  if (result.kind === 'applied') ctx.runWatch.publishRun(result.run);
  ctx.metrics.transitioned('admin', result);
  await appendAudit(
    ctx.db,
    { action: 'run.cancelled', actorUserId: opts.actorUserId ?? null, agentId: run.agent_id, runId, details: { via: opts.via, runtime_cancel: runtimeCancel } },
    now,
  );
  return { kind: 'cancelled', run: result.run, runtimeCancel };
}

export type LogsResult = { kind: 'ok'; logs: unknown[] } | { kind: 'upstream_failed'; message: string; runId: number } | { kind: 'not_found' };

/** Spec 2.2: logs come from the runtime on demand. A run the runtime never knew has none: an empty list. */
export async function fetchRunLogs(ctx: AppContext, runId: number): Promise<LogsResult> {
  const run = await findRun(ctx.db, runId);
  if (!run) return { kind: 'not_found' };
  const runtime = await runtimeOf(ctx, run);
  if (!runtime || !run.external_run_id) return { kind: 'ok', logs: [] };
  const res = await ctx.runtimes.get(runtime.kind).fetchLogs(runtime, run.external_run_id);
  if (!res.ok) return { kind: 'upstream_failed', message: `the runtime did not return logs: ${res.failure.message}`, runId };
  return { kind: 'ok', logs: res.value };
}

async function runtimeOf(ctx: AppContext, run: RunRow): Promise<RuntimeConnection | null> {
  const agent = await ctx.agents.get(run.agent_id);
  return agent?.runtime_id ? ctx.agents.runtime(agent.runtime_id) : null;
}
