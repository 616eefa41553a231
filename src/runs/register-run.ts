// Spec 4.4: registers a run the caller started on the runtime itself, and hands back what the task needs to
// resolve credentials (spec 4.10). Idempotent on (agentId, externalRunId): every repeat, concurrent or not, gets
// the one run (insertRunOnce) and the run's one credentials token, never a new one (spec part 5: "minted once, at
// trigger or register", no refresh). The token is issued at the run's creation: a repeat answers the same token
// with the seconds it has left, and nothing once it has expired (decisions.md "Register, ingest and callback").
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { insertRunOnce, type RunRow } from './runs-repo.ts';
import type { ConnectionIds } from '../agents/connections-repo.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { runCredentialsToken } from '../agents/agent-tokens.ts';
import { assertEligible } from './begin-run.ts';

export interface RegisterRequest {
  externalRunId: string;
  input?: object;
  metadata?: object;
  userId?: string | null;
}

export interface RegisterResult {
  run: RunRow;
  /** False when the call repeated an earlier registration. */
  created: boolean;
  /** Spec 4.4: all three together, or none when the agent has no active connections. */
  credentials?: { credentialsToken: string; expiresInSeconds: number; connectionIds: ConnectionIds };
}

/** Throws 403 not_eligible (spec 4.4 "Eligibility: same as /trigger", part 7) before anything is written. */
export async function registerRun(ctx: AppContext, agent: AgentRow, req: RegisterRequest): Promise<RegisterResult> {
  assertEligible(agent, 'trigger');
  // Spec 4.4: an unknown or non-member user is dropped silently; only the first registration records it.
  const createdBy = await attributableUser(ctx.db, agent.org_id, req.userId);
  const now = ctx.clock.now();
  const { run, created } = await insertRunOnce(ctx.db, {
    agentId: agent.id,
    externalRunId: req.externalRunId,
    // Spec part 3: "(none) → running" with no queued step; started_at is the registration.
    status: 'running',
    source: 'register',
    now,
    startedAt: now,
    input: req.input ?? {},
    metadata: req.metadata ?? {},
    createdBy,
    // The external run id is the runtime's own (spec 2.2), so the run is polled like a triggered one: that is how
    // it ends when no callback comes, and how the running timeout reaches it (spec part 3). The first poll is due
    // at once: it is where the id is checked to be a run of this agent's own task or workflow (issue 12; a run of
    // another is failed there, decisions.md "Register, ingest and callback"), without making /register wait.
    nextPollAt: now,
  });
  if (created) ctx.metrics.entered('ingest', run.status); // spec part 3: (none) → running

  const connectionIds = await ctx.agents.connectionIds(agent.id);
  if (Object.keys(connectionIds).length === 0) return { run, created };
  const issued = await runCredentialsToken(ctx, agent, run, now);
  // An expired token is no token: spec 4.4 sends credentialsToken and connectionIds together or not at all.
  if (!issued) return { run, created };
  return { run, created, credentials: { credentialsToken: issued.token, expiresInSeconds: issued.expiresInSeconds, connectionIds } };
}
