// GET /api/credentials/{connectionId}/resolve (spec 4.10). The agent-key hook of this context has authenticated
// the caller (req.agent); the credentials token is the second factor. Spec 8.1: no rate limit, so this route sets
// no `config.rateLimit`.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { resolveForRun } from '../../credentials/resolve-credentials.ts';
import { answer, NO_STORE, ResolvedCredential } from '../../schemas/responses.ts';
import { requires } from '../../http/openapi-document.ts';

export default async function credentialsResolveRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().get(
    '/credentials/:connectionId/resolve',
    {
      schema: {
        operationId: 'resolveCredential',
        summary: 'Resolve a connection’s secret just before calling a third-party API',
        description: 'Spec 4.10. Two factors: the agent key and the run’s credentials token. OAuth tokens are refreshed when they expire within 60 s.',
        security: [requires('agentKey', 'credentialsToken')],
        params: Type.Object({ connectionId: Type.String({ description: '`connectionIds[<integration>].connectionId` from the task payload or /register.' }) }),
        response: { 200: answer(ResolvedCredential, 'The secret, by its type.', NO_STORE) },
        errors: ['forbidden', 'not_found', 'upstream_failed'],
      },
    },
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
