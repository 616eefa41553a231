// Admin replay (issue 14): a new run of the same agent with the run's stored input, started by the very service
// /trigger uses (triggerRun), so eligibility, the agent's trigger rate limit and the runtime call are the same.
// The new run names the run it replays (runs.replay_of, written by its insert); both show the link.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { errors } from '../errors.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { isOverLimit, type OverLimit, type RateGuard } from '../rate-limits/rate-guard.ts';
import { findRun, type RunRow } from '../runs/runs-repo.ts';
import { triggerRun } from '../runs/begin-run.ts';
import { STARTED_SOURCES } from '../runs/run-sources.ts';
import { isKeyTaken } from '../runs/idempotency.ts';
import { toAdminRunView, type AdminRunView } from '../runs/run-view.ts';

/**
 * Why a run cannot be replayed, by source. Webhook runs store their request with header values masked (spec 4.6),
 * so a replay would not be the same request; ingest and /register runs were reported by the agent, not started
 * here, so there is nothing to start again.
 */
const WHY_NOT: Record<string, string> = {
  webhook: 'it came from an inbound webhook, whose stored headers are masked',
  webhook_and_wait: 'it came from an inbound webhook, whose stored headers are masked',
  ingest: 'it was reported by the agent (ingest), not started by this service',
  register: 'it was registered by the agent (/register), not started by this service',
};

/** Runs whose stored input is what their runtime was started with. */
const REPLAYABLE_SOURCES: ReadonlySet<string> = new Set(STARTED_SOURCES.filter((s) => !(s in WHY_NOT)));

export interface ReplaySource {
  run: RunRow;
  agent: AgentRow;
}

export type ReplayResult = { ok: true; run: AdminRunView & { replay_of: number } } | { ok: false; runId: number; reason: string };

/** The run to replay and its agent: 404 for an unknown run, 409 for a run that cannot be replayed. */
export async function findReplaySource(ctx: AppContext, runId: number): Promise<ReplaySource> {
  const run = await findRun(ctx.db, runId);
  if (!run) throw errors.notFound('run');
  if (!REPLAYABLE_SOURCES.has(run.source)) {
    throw errors.conflict(`run ${runId} cannot be replayed: ${WHY_NOT[run.source] ?? `its source (${run.source}) is not one this service starts`}`);
  }
  const agent = await ctx.agents.get(Number(run.agent_id));
  if (!agent) throw errors.notFound('agent');
  return { run, agent };
}

/**
 * Starts the replay for who asked (created_by; null for the admin token, which is no user) and audits it, also
 * when the runtime refused it (the new run exists, failed). Over the agent's trigger limit nothing is written.
 */
export async function replayRun(
  ctx: AppContext,
  source: ReplaySource,
  guard: RateGuard | null,
  actorUserId: string | null,
): Promise<ReplayResult | OverLimit> {
  const replayOf = Number(source.run.id);
  const result = await triggerRun(ctx, 'replay', { agent: source.agent, input: storedInput(source.run), guard, replayOf, userId: actorUserId });
  if (isOverLimit(result)) return result;
  if (isKeyTaken(result)) throw new Error('a replay carries no Idempotency-Key');
  const runId = Number(result.run.id);
  await appendAudit(ctx.db, { action: 'run.replayed', actorUserId, agentId: source.agent.id, runId, details: { replay_of: replayOf } }, ctx.clock.now());
  if (!result.ok) return { ok: false, runId, reason: result.reason };
  const row = await findRun(ctx.db, runId);
  if (!row) throw new Error(`replay run ${runId} vanished`);
  return { ok: true, run: { ...toAdminRunView(row), replay_of: replayOf } };
}

/** /trigger's merge puts the agent's current default_input under it; the stored values win everywhere. */
function storedInput(run: RunRow): object {
  const input = run.input;
  return typeof input === 'object' && input !== null && !Array.isArray(input) ? input : {};
}
