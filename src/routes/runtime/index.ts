// Runtime-facing endpoints, authenticated by the agent key (spec part 5): the key itself names the agent.
import type { FastifyInstance } from 'fastify';
import { bearerToken } from '../../http/bearer.ts';
import { errors } from '../../errors.ts';
import { limitRequest } from '../../http/rate-limit.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';
import { requires } from '../../http/openapi-document.ts';
import waitpointRoute from './waitpoint.ts';
import credentialsResolveRoute from './credentials-resolve.ts';
import callbackRoute from './callback.ts';

export default async function runtimeRoutes(app: FastifyInstance): Promise<void> {
  // Credential resolution narrows this to the agent key plus the credentials token (its own `security`).
  documentRoutes(app, { tag: 'runtime', security: [requires('agentKey')], errors: ['unauthorized'] });
  app.addHook('onRequest', async (req, reply) => {
    const token = bearerToken(req);
    const agent = token ? await app.ctx.agents.byAgentKey(token) : null;
    if (!agent) throw errors.unauthorized('missing or invalid agent key');
    req.agent = agent;
    const rl = req.routeOptions.config.rateLimit;
    if (rl && (await limitRequest(app, req, reply, rl, { agentId: agent.id }))) return reply;
  });
  await app.register(waitpointRoute);
  await app.register(credentialsResolveRoute);
  await app.register(callbackRoute);
}
