// GET /api/credentials/{connectionId}/resolve (spec 4.10). The agent-key hook of this context has authenticated
// the caller (req.agent); the credentials token is the second factor. Spec 8.1: no rate limit, so this route sets
// no `config.rateLimit`.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { resolveForRun } from '../../credentials/resolve-credentials.ts';

export default async function credentialsResolveRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/credentials/:connectionId/resolve',
    { schema: { params: Type.Object({ connectionId: Type.String() }) } },
    async (req, reply) => {
      const header = req.headers['x-credentials-token'];
      const resolved = await resolveForRun(app.ctx, {
        agent: req.agent!,
        connectionId: req.params.connectionId,
        credentialsToken: typeof header === 'string' && header !== '' ? header.trim() : null,
      });
      reply.header('cache-control', 'no-store');
      return resolved;
    },
  );
}
