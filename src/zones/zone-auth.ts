// Who a zone request acts for (zones.md): a zone JWT for the path agent, whose user is still a member of the
// agent's organization (or a platform admin), on an agent that is active and platform-managed.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { ApiError, errors } from '../errors.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { checkZoneToken } from '../agents/agent-tokens.ts';

export interface ZoneCaller {
  agent: AgentRow;
  userId: string;
}

/**
 * 401 missing/malformed/expired/wrongly signed token (also for an unknown agent: without its secret nothing can
 * be verified); 403 a valid token of another agent, or a user who is no longer a member; 422 an agent that is not
 * active or not platform-managed.
 */
export async function authenticateZoneRequest(ctx: AppContext, agentId: number | null, token: string | null): Promise<ZoneCaller> {
  const agent = agentId === null ? null : await ctx.agents.get(agentId);
  const check = await checkZoneToken(ctx, agentId, agent, token);
  if (!check.ok) throw check.status === 403 ? new ApiError('forbidden', check.reason) : errors.unauthorized(check.reason);
  // A verified token implies the agent exists (its secret verified it).
  const member = await attributableUser(ctx.db, agent!.org_id, check.userId);
  if (!member) throw new ApiError('forbidden', "the token's user is not a member of the agent's organization");
  assertZoneEligible(agent!);
  return { agent: agent!, userId: member };
}

/** zones.md: zone endpoints need an active, platform-managed agent (allow_external_triggers does not apply). */
export function assertZoneEligible(agent: AgentRow): void {
  if (agent.managed_by !== 'platform') throw errors.agentUnavailable('agent is not platform-managed');
  if (agent.status !== 'active') throw errors.agentUnavailable(`agent is ${agent.status}, not active`);
}
