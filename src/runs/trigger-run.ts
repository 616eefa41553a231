// Spec 4.1: the asynchronous trigger. Eligibility, attribution and the input merge, then startRun.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import { errors } from '../errors.ts';
import { deepMerge } from '../lib/merge.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { startRun, type StartRunResult } from './start-run.ts';
import type { StartedSource } from './run-sources.ts';
import { idempotently, type IdempotencyRequest, type KeyTaken } from './idempotency.ts';

export interface TriggerRequest {
  input?: object;
  userId?: string | null;
  /** This request's rate-limit count, made by the run's insert (over the limit: OverLimit, nothing written). */
  guard?: RateGuard | null;
  /** The request's Idempotency-Key: a key already held starts nothing (KeyTaken). */
  idempotency?: IdempotencyRequest | null;
  /** An admin replay (issue 14): the run this one starts again. */
  replayOf?: number;
  /**
   * Started from inside the platform (the console, issue 14), like a zone app: allow_external_triggers, a gate for
   * callers outside the platform, does not apply.
   */
  fromPlatform?: boolean;
}

/** Spec 4.1: managed_by='platform', status='active', allow_external_triggers (unless fromPlatform) — otherwise 403. */
export function assertTriggerEligible(agent: AgentRow, fromPlatform = false): void {
  if (agent.managed_by !== 'platform') throw errors.notEligible('agent is not platform-managed');
  if (agent.status !== 'active') throw errors.notEligible(`agent is ${agent.status}, not active`);
  if (!fromPlatform && !agent.allow_external_triggers) throw errors.notEligible('external triggers are disabled for this agent');
}

/** Spec 4.1's run input: the caller's values merged over the agent's saved default input (the caller's win). */
export function triggerInput(agent: AgentRow, input: object | undefined): unknown {
  // deepMerge skips __proto__/constructor/prototype and builds fresh objects.
  return deepMerge(agent.default_input ?? {}, input ?? {});
}

export async function triggerRun(ctx: AppContext, agent: AgentRow, req: TriggerRequest, source: StartedSource = 'trigger'): Promise<StartRunResult | OverLimit | KeyTaken> {
  assertTriggerEligible(agent, req.fromPlatform);
  const createdBy = await attributableUser(ctx.db, agent.org_id, req.userId);
  const input = triggerInput(agent, req.input);
  return idempotently(ctx, agent.id, req.idempotency, req.guard, (keyClaim) => startRun(ctx, { agent, input, createdBy, source, guard: req.guard, keyClaim, replayOf: req.replayOf }));
}
