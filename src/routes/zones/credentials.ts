// GET /api/zones/agents/{agentId}/credentials/{key} (zones.md): spec 4.10's answer for the agent's active
// connection of integration `key`, through the same resolution core (OAuth refresh included). 60/min per user
// and agent (spec 8.1).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { resolveForZone } from '../../credentials/resolve-credentials.ts';
import { answer, NO_STORE, ResolvedCredential } from '../../schemas/responses.ts';

export default async function zoneCredentialsRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/credentials/:key',
    {
      schema: {
        operationId: 'zoneResolveCredential',
        summary: 'Resolve the agent’s active connection of one integration (as spec 4.10)',
        params: Type.Object({ agentId: Type.String(), key: Type.String({ description: 'The integration id.' }) }),
        response: { 200: answer(ResolvedCredential, 'The secret, by its type.', NO_STORE) },
        errors: ['not_found', 'upstream_failed', 'rate_limited'],
      },
      config: { rateLimit: { bucket: 'zone-credentials', limit: LIMITS.zoneCredentials, per: 'user_agent' } },
    },
    async (req, reply) => {
      const resolved = await resolveForZone(app.ctx, { agent: req.agent!, integrationId: req.params.key, userId: req.zoneUserId! });
      reply.header('cache-control', 'no-store');
      return resolved;
    },
  );
}
