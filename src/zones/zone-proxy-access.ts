// Who may pass the zone proxy, and what it sends on (zones.md "The proxy mints the zone JWT"): a signed-in member
// of the agent's organization (or a platform admin) reaches the agent's zone app with a zone JWT minted for this
// one request.
import type { AppContext } from '../context.ts';
import { ApiError, errors } from '../errors.ts';
import { mintZoneToken } from '../lib/jwt.ts';
import { attributableUser } from '../orgs/attribution.ts';
import { zoneSecretOf } from '../agents/agent-tokens.ts';

/** zones.md / spec 8.5: a zone JWT lives 5 minutes, and a new one is minted on every proxied request. */
export const ZONE_TOKEN_TTL_SECONDS = 300;

export interface ZoneProxyPass {
  agentId: number;
  userId: string;
  /** The agent's zone_app_url. */
  zoneAppUrl: string;
  zoneToken: string;
}

/**
 * `user`: who signed in (a personal token, a session, or a console frame's pass). 401 without one, 404 for an
 * unknown agent or one without a zone app, 403 for a non-member.
 */
export async function passZoneProxy(ctx: AppContext, agentId: number | null, user: { id: string } | null): Promise<ZoneProxyPass> {
  if (!user) throw errors.unauthorized('sign in with a personal token (Authorization: Bearer or the ars_session cookie)');
  const agent = agentId === null ? null : await ctx.agents.get(agentId);
  if (!agent || !agent.zone_app_url) throw errors.notFound('zone app');
  const member = await attributableUser(ctx.db, agent.org_id, user.id);
  if (!member) throw new ApiError('forbidden', "you are not a member of this agent's organization");
  const { token } = await mintZoneToken({
    secret: zoneSecretOf(ctx, agent),
    userId: member,
    agentId: agent.id,
    orgId: agent.org_id,
    now: ctx.clock.now(),
    ttlSeconds: ZONE_TOKEN_TTL_SECONDS,
  });
  return { agentId: agent.id, userId: member, zoneAppUrl: agent.zone_app_url, zoneToken: token };
}
