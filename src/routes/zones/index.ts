// /api/zones/agents/{agentId}/* (zones.md, spec 4.11): authenticated by a zone JWT, acting for its user. Spec 8.1
// counts these per user (runs) or per user and agent (waitpoint, credentials), never per agent alone.
import type { FastifyInstance } from 'fastify';
import { allowEmptyJsonBody } from '../../http/empty-json-body.ts';
import { bearerToken, parseId } from '../../http/bearer.ts';
import { limitRequest } from '../../http/rate-limit.ts';
import { authenticateZoneRequest } from '../../zones/zone-auth.ts';
import { rememberIdempotentAnswers } from '../../http/idempotency-key.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';
import { requires } from '../../http/openapi-document.ts';
import zoneRunRoutes from './runs.ts';
import zoneWaitpointRoute from './waitpoint.ts';
import zoneCredentialsRoute from './credentials.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The zone token's user (a member of the agent's organization or a platform admin), set by the zone hook. */
    zoneUserId: string | null;
  }
}

export default async function zoneRoutes(app: FastifyInstance): Promise<void> {
  // The zone hook answers a bad token (401), a token of another agent or a non-member (403), an ineligible agent (422).
  documentRoutes(app, { tag: 'zones', security: [requires('zoneJwt')], errors: ['unauthorized', 'forbidden', 'agent_unavailable'] });
  app.decorateRequest('zoneUserId', null);
  app.addHook('onRequest', async (req, reply) => {
    const agentId = parseId((req.params as { agentId?: string }).agentId);
    const caller = await authenticateZoneRequest(app.ctx, agentId, bearerToken(req));
    req.agent = caller.agent;
    req.zoneUserId = caller.userId;
    const rl = req.routeOptions.config.rateLimit;
    if (rl && (await limitRequest(app, req, reply, rl, { agentId: caller.agent.id, userId: caller.userId }))) return reply;
  });
  allowEmptyJsonBody(app); // every zone body is optional ({input?}, {payload?})
  rememberIdempotentAnswers(app); // the run-starting endpoints take an Idempotency-Key
  await app.register(zoneRunRoutes);
  await app.register(zoneWaitpointRoute);
  await app.register(zoneCredentialsRoute);
}

