// POST /api/agents/{agentId}/runs/trigger-and-wait (spec 4.2): start a run with the ingest key and hold the
// caller until it is terminal or the window (8.3) closes.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import type { RateGuard } from '../rate-limits/rate-guard.ts';
import { errors } from '../errors.ts';
import { deepMerge } from '../lib/merge.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { waitWindowMs } from './wait-window.ts';
import { startAndAwait, type SyncOutcome } from './sync-wait.ts';
import { idempotently, type IdempotencyRequest, type KeyTaken } from '../runs/idempotency.ts';

export interface TriggerAndWaitRequest {
  input?: object;
  userId?: string;
  timeoutMs?: number;
  /** This request's rate-limit count, made by the run's insert. */
  guard?: RateGuard | null;
  /** The request's Idempotency-Key: a key already held starts nothing (KeyTaken). */
  idempotency?: IdempotencyRequest | null;
}

/**
 * Spec part 7 for the synchronous ingest-key endpoints: 403 when `allow_external_triggers` is off, 422 when the
 * agent is not platform-managed or not active. (4.2 says "eligibility: same as /trigger", whose table has 403
 * for everything; part 7 lists 422 for these two cases here, and part 7 is what is implemented.)
 */
export function assertSyncTriggerable(agent: AgentRow): void {
  if (!agent.allow_external_triggers) throw errors.notEligible('external triggers are disabled for this agent');
  if (agent.managed_by !== 'platform') throw errors.agentUnavailable('agent is not platform-managed');
  if (agent.status !== 'active') throw errors.agentUnavailable(`agent is not active (status ${agent.status})`);
}

export async function triggerAndWait(
  ctx: AppContext,
  agent: AgentRow,
  req: TriggerAndWaitRequest,
  signal?: AbortSignal,
): Promise<SyncOutcome | KeyTaken> {
  assertSyncTriggerable(agent);
  const createdBy = await attributableUser(ctx.db, agent.org_id, req.userId);
  // Spec 4.2: merged on top of the saved default input; the caller's values win.
  const input = deepMerge(agent.default_input ?? {}, req.input ?? {});
  const windowMs = waitWindowMs({ timeoutMs: req.timeoutMs, runningTimeoutMs: agent.running_timeout_ms });
  return idempotently(ctx, agent.id, req.idempotency, req.guard, (keyClaim) =>
    startAndAwait(ctx, { agent, input, createdBy, source: 'trigger_and_wait', guard: req.guard, keyClaim }, { windowMs, signal }),
  );
}
