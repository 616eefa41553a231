// One way in for every run this service starts (issue 38 item 1). Each front — /trigger, the synchronous
// endpoints, the zone endpoints, the console's "run now", an admin replay — is a row of FRONTS, and beginRun takes
// every start through the same steps: the front's eligibility, whom the run is attributed to, the caller's input
// merged over the agent's default input, and the Idempotency-Key. Then the front's own start answers at once
// (startRun), waits (sync/), or streams (sync/download-run.ts). Webhook runs (webhooks/) share the eligibility
// table; their input is the inbound request, not a merge, and they take no key.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import { errors } from '../errors.ts';
import { deepMerge } from '../lib/merge.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { startRun, type StartRunArgs, type StartRunResult } from './start-run.ts';
import type { StartedSource } from './run-sources.ts';
import { idempotently, type IdempotencyRequest, type KeyTaken } from './idempotency.ts';

/** Who may start a run of the agent from a front; throws the front's 403 or 422 (spec 4.1-4.7, part 7). */
type Eligibility = (agent: AgentRow) => void;

/** Spec 4.1 (and 4.4): managed_by='platform', status='active', allow_external_triggers — otherwise 403. */
const externalTrigger: Eligibility = (agent) => {
  platformTrigger(agent);
  if (!agent.allow_external_triggers) throw errors.notEligible('external triggers are disabled for this agent');
};

/**
 * The console and zone apps are part of the platform, so allow_external_triggers (a gate for callers outside it)
 * does not apply; the agent must still be platform-managed and active (403, as 4.1).
 */
const platformTrigger: Eligibility = (agent) => {
  if (agent.managed_by !== 'platform') throw errors.notEligible('agent is not platform-managed');
  if (agent.status !== 'active') throw errors.notEligible(`agent is ${agent.status}, not active`);
};

/**
 * Spec part 7 for the synchronous ingest-key endpoints: 403 when `allow_external_triggers` is off, 422 when the
 * agent is not platform-managed or not active. (4.2 says "eligibility: same as /trigger", whose table has 403 for
 * everything; part 7 lists 422 for these two cases here, and part 7 is what is implemented.)
 */
const externalSync: Eligibility = (agent) => {
  if (!agent.allow_external_triggers) throw errors.notEligible('external triggers are disabled for this agent');
  usableAgent(agent);
};

/** Spec 4.6 / 4.7 / part 7 after the token matched: 403 toggle off, 422 not platform or not active. */
const webhookTrigger: Eligibility = (agent) => {
  if (!agent.allow_webhook_triggers) throw errors.notEligible('webhook triggers are disabled for this agent');
  usableAgent(agent);
};

function usableAgent(agent: AgentRow): void {
  if (agent.managed_by !== 'platform') throw errors.agentUnavailable('agent is not platform-managed');
  if (agent.status !== 'active') throw errors.agentUnavailable(`agent is not active (status ${agent.status})`);
}

/** Spec 4.3 / zones.md: a download needs an agent whose output is a file (422). */
const filesOnly = (before: Eligibility | null): Eligibility => (agent) => {
  before?.(agent);
  if (agent.output_kind !== 'file_download') throw errors.agentUnavailable('agent output_kind is not file_download');
};

interface Front {
  eligible: Eligibility | null;
  /**
   * `checked`: the caller names a user, kept only if a member of the agent's organization or a platform admin,
   * else dropped silently (spec 4.1). `trusted`: the user is the authenticated principal, already checked (zones).
   */
  attribution: 'checked' | 'trusted';
}

/** Every front that starts a run, by the source its runs record (runs.source). */
export const FRONTS: Readonly<Record<StartedSource, Front>> = {
  trigger: { eligible: externalTrigger, attribution: 'checked' },
  trigger_and_wait: { eligible: externalSync, attribution: 'checked' },
  download: { eligible: filesOnly(externalSync), attribution: 'checked' },
  webhook: { eligible: webhookTrigger, attribution: 'trusted' },
  webhook_and_wait: { eligible: webhookTrigger, attribution: 'trusted' },
  // The zone hook has already refused an ineligible agent (zones.md): the token's user is a member or an admin.
  zone: { eligible: null, attribution: 'trusted' },
  zone_wait: { eligible: null, attribution: 'trusted' },
  zone_download: { eligible: filesOnly(null), attribution: 'trusted' },
  console: { eligible: platformTrigger, attribution: 'checked' },
  // A replay starts the run again as /trigger would (admin/run-replay.ts).
  replay: { eligible: externalTrigger, attribution: 'checked' },
};

/** Throws the front's refusal (403 or 422) unless the agent may be started from it; writes nothing. */
export function assertEligible(agent: AgentRow, front: StartedSource): void {
  FRONTS[front].eligible?.(agent);
}

/** What every front asks of beginRun. */
export interface StartRequest {
  agent: AgentRow;
  /** The caller's input (spec 4.1): merged over the agent's saved default input, the caller's values winning. */
  input?: object;
  userId?: string | null;
  /** This request's rate-limit count, made by the run's insert (over the limit: OverLimit, nothing written). */
  guard?: RateGuard | null;
  /** The request's Idempotency-Key: a key already held starts nothing (KeyTaken). */
  idempotency?: IdempotencyRequest | null;
  /** An admin replay (issue 14): the run this one starts again. */
  replayOf?: number;
}

/** The steps every front shares; `start` is the front's own (answer at once, wait, or stream). */
export async function beginRun<R>(ctx: AppContext, front: StartedSource, req: StartRequest, start: (args: StartRunArgs) => Promise<R>): Promise<R | KeyTaken> {
  const { agent } = req;
  assertEligible(agent, front);
  const createdBy = FRONTS[front].attribution === 'checked' ? await attributableUser(ctx.db, agent.org_id, req.userId) : (req.userId ?? null);
  // deepMerge skips __proto__/constructor/prototype and builds fresh objects.
  const input = deepMerge(agent.default_input ?? {}, req.input ?? {});
  return idempotently(ctx, agent.id, req.idempotency, req.guard, (keyClaim) =>
    start({ agent, input, createdBy, source: front, guard: req.guard, keyClaim, replayOf: req.replayOf }),
  );
}

/** Spec 4.1's start: the run is queued and its runtime called; the caller is answered at once. */
export function triggerRun(ctx: AppContext, front: 'trigger' | 'zone' | 'console' | 'replay', req: StartRequest): Promise<StartRunResult | OverLimit | KeyTaken> {
  return beginRun(ctx, front, req, (args) => startRun(ctx, args));
}
