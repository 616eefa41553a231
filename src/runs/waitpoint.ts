// Completing a waitpoint (spec 4.9; zones.md reuses it for the zone sibling). The token id comes only from the
// run's stored wait state, never from the caller.
//
// Concurrency: the run is CLAIMED before the runtime is called — one short transaction locks the row, checks that
// it is still `waiting` on the token we inspected, and moves it `waiting → running` with the token cleared. A
// second caller then finds the run running and gets 409, so the runtime sees at most one completion per token.
// If the runtime refuses, the claim is undone (back to `waiting` with the same token) unless something else moved
// the run meanwhile. Claiming first also closes a race the opposite order has: a workflow resumed by us may report
// its next `waiting` (n8n reuses one resume URL per execution) before a late `resumed` write would wipe it.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { findRun, lockRunOfAgent, type RunRow, type WaitState } from './runs-repo.ts';
import { transition } from './run-transitions.ts';

import { appendAudit } from '../orgs/audit-repo.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { foreignTokenReason } from './waitpoint-ownership.ts';
import { waitpointTag } from '../runtimes/trigger-dev-mapping.ts';
import type { Outcome, RuntimeAdapter, RuntimeConnection, RuntimeFailure, RuntimeKind, WaitpointState } from '../runtimes/runtime-adapter.ts';

export type WaitpointConflict =
  | 'not_waiting' // the run is not `waiting`
  | 'no_pending_token' // waiting, but no token stored
  | 'unsupported' // the agent has no runtime, or its runtime has no waitpoints
  | 'token_not_waiting' // the runtime says the token is completed or timed out
  | 'runtime_refused' // the runtime could not be asked, or refused the completion
  | 'lost_race' // another completion (or a terminal write) got there first
  | 'foreign_token'; // the runtime says the token ends another run's wait (waitpoint-ownership.ts)

export type WaitpointResult =
  | { kind: 'ok'; run: RunRow }
  | { kind: 'not_found' }
  | { kind: 'conflict'; reason: WaitpointConflict; message: string };

export interface CompleteWaitpointArgs {
  agent: AgentRow;
  runId: number;
  /** Forwarded to the runtime as the waitpoint result; absent means none. */
  payload?: Record<string, unknown> | null;
  /** Who asks. Recorded on the audit entry only when a member of the agent's org or a platform admin (spec 4.9). */
  actorUserId?: string | null;
  /** Which door the completion came through, for the audit entry. */
  via?: 'agent_key' | 'zone' | 'console';
}

/**
 * Whether an UNKNOWN inspection may go ahead. n8n can only confirm WAITING with its API key, and its resume
 * endpoint refuses a non-waiting execution itself; Trigger.dev answers success even for finished tokens (⚠), so
 * only a confirmed WAITING will do. A new runtime kind must decide here (the Record makes that a compile error).
 */
const UNKNOWN_INSPECTION_PROCEEDS: Record<RuntimeKind, boolean> = { workflow: true, task: false };

const conflict = (reason: WaitpointConflict, message: string): WaitpointResult => ({ kind: 'conflict', reason, message });

export async function completeWaitpoint(ctx: AppContext, args: CompleteWaitpointArgs): Promise<WaitpointResult> {
  const { agent, runId } = args;
  const run = await findRun(ctx.db, runId);
  if (!run || run.agent_id !== agent.id) return { kind: 'not_found' };
  if (run.status !== 'waiting') return conflict('not_waiting', `run ${runId} is ${run.status}, not waiting`);
  const waitState = run.wait_state;
  const tokenId = waitState?.tokenId;
  if (!waitState || typeof tokenId !== 'string' || tokenId === '') return conflict('no_pending_token', `run ${runId} has no pending waitpoint token`);

  const target = await runtimeFor(ctx, agent);
  if (!target) return conflict('unsupported', 'the agent\'s runtime does not support waitpoints');
  const { adapter, conn } = target;

  const inspected = await adapter.inspectWaitpoint(conn, tokenId);
  if (!inspected.ok) return refused(ctx, runId, 'inspect', inspected.failure);
  const state = inspected.value.status;
  if (state === 'COMPLETED' || state === 'TIMED_OUT') return conflict('token_not_waiting', `the waitpoint token is ${state.toLowerCase().replace('_', ' ')} at the runtime`);
  if (state === 'UNKNOWN' && !UNKNOWN_INSPECTION_PROCEEDS[conn.kind]) return conflict('token_not_waiting', 'the runtime did not confirm that the waitpoint token is waiting');
  const runTag = waitpointTag({ runId, deploymentId: ctx.deploymentId });
  const foreign = foreignTokenReason({ externalRunId: run.external_run_id, target: agent.target, runTag }, inspected.value.resumes);
  if (foreign) {
    ctx.log.warn({ runId }, `waitpoint refused: ${foreign}`);
    return conflict('foreign_token', foreign);
  }

  const actor = await attributableUser(ctx.db, agent.org_id, args.actorUserId);
  const claimed = await claim(ctx, runId, agent.id, tokenId);
  if (!claimed) return conflict('lost_race', `run ${runId} is no longer waiting on this waitpoint`);

  let completed: Outcome<void>;
  try {
    completed = await adapter.completeWaitpoint(conn, tokenId, args.payload ?? undefined);
  } catch (err) {
    // Adapters report failures as values; a throw is a bug, but must not strand the run with its token cleared.
    await unclaim(ctx, runId, agent.id, waitState);
    throw err;
  }
  if (!completed.ok && !(await landedAnyway(adapter, conn, tokenId, state, completed.failure))) {
    await unclaim(ctx, runId, agent.id, waitState);
    return refused(ctx, runId, 'complete', completed.failure);
  }

  await appendAudit(ctx.db, {
    action: 'run.waitpoint_completed',
    actorUserId: actor,
    agentId: agent.id,
    runId,
    details: { via: args.via ?? 'agent_key' },
  }, ctx.clock.now());
  return { kind: 'ok', run: claimed };
}

async function runtimeFor(ctx: AppContext, agent: AgentRow): Promise<{ adapter: RuntimeAdapter; conn: RuntimeConnection } | null> {
  if (agent.runtime_id === null) return null;
  const conn = await ctx.agents.runtime(agent.runtime_id);
  if (!conn) return null;
  const adapter = ctx.runtimes.get(conn.kind);
  return adapter.supportsWaitpoints ? { adapter, conn } : null;
}

/** waiting → running with the token cleared, only if the run still waits on `tokenId`. */
async function claim(ctx: AppContext, runId: number, agentId: number, tokenId: string): Promise<RunRow | null> {
  const moved = await ctx.db.transaction(async (tx) => {
    const locked = await lockRunOfAgent(tx, runId, agentId);
    if (locked?.status !== 'waiting' || locked.wait_state?.tokenId !== tokenId) return null;
    const res = await transition(tx, runId, 'resumed', 'running', ctx.clock.now(), { waitState: null }, { agentId, via: 'waitpoint' });
    return res.kind === 'applied' ? res.run : null;
  });
  if (moved) ctx.runWatch.publishRun(moved);
  if (moved) ctx.metrics.entered('waitpoint', moved.status);
  return moved;
}

/**
 * Undoes a claim after the runtime refused: back to `waiting` on the same token, but only if nothing touched the
 * run since (still running, no new wait state). The `waiting` event's outbox message id is keyed on the token, so
 * this does not notify twice.
 */
async function unclaim(ctx: AppContext, runId: number, agentId: number, waitState: WaitState): Promise<void> {
  const moved = await ctx.db.transaction(async (tx) => {
    const locked = await lockRunOfAgent(tx, runId, agentId);
    if (locked?.status !== 'running' || locked.wait_state) return null;
    const res = await transition(tx, runId, 'waiting', 'waiting', ctx.clock.now(), { waitState }, { agentId, via: 'waitpoint' });
    return res.kind === 'applied' ? res.run : null;
  });
  if (moved) ctx.runWatch.publishRun(moved);
  if (moved) ctx.metrics.entered('waitpoint', moved.status);
  else ctx.log.warn({ runId }, 'waitpoint completion refused, and the run moved meanwhile: claim left as is');
}

/**
 * A transport failure (no HTTP answer) leaves it open whether the runtime got the completion. A token confirmed
 * WAITING before and COMPLETED now was completed by us — we hold the claim — so undoing the claim would strand
 * the run in `waiting`.
 */
async function landedAnyway(
  adapter: RuntimeAdapter,
  conn: RuntimeConnection,
  tokenId: string,
  before: WaitpointState['status'],
  failure: RuntimeFailure,
): Promise<boolean> {
  const ambiguous = failure.httpStatus === undefined && (failure.kind === 'timeout' || failure.kind === 'unreachable');
  if (!ambiguous || before !== 'WAITING') return false;
  const again = await adapter.inspectWaitpoint(conn, tokenId);
  return again.ok && again.value.status === 'COMPLETED';
}

function refused(ctx: AppContext, runId: number, step: 'inspect' | 'complete', failure: RuntimeFailure): WaitpointResult {
  // failure.message is written by the adapters for people and never carries secrets.
  ctx.log.warn({ runId, step, failure: { kind: failure.kind, httpStatus: failure.httpStatus } }, `waitpoint ${step} failed: ${failure.message}`);
  return conflict('runtime_refused', `the runtime refused the waitpoint completion: ${failure.message}`);
}
