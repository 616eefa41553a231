// /api/agents/{agentId}/runs/* authenticated by the agent's ingest key (spec part 5). An ingest key of another
// agent, or an unknown agent, is the same 401. The per-agent rate limit counts only authenticated calls.
import type { FastifyInstance } from 'fastify';
import { bearerToken, parseId } from '../../http/bearer.ts';
import { secretMatches } from '../../lib/secrets.ts';
import { errors } from '../../errors.ts';
import { limitRequest } from '../../http/rate-limit.ts';
import { rememberIdempotentAnswers } from '../../http/idempotency-key.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';
import { requires } from '../../http/openapi-document.ts';
import triggerRoute from './trigger.ts';
import triggerAndWaitRoute from './trigger-and-wait.ts';
import triggerAndDownloadRoute from './trigger-and-download.ts';
import registerRoute from './register.ts';
import ingestRoute from './ingest.ts';

export default async function ingestRoutes(app: FastifyInstance): Promise<void> {
  documentRoutes(app, { tag: 'ingest', security: [requires('ingestKey')], errors: ['unauthorized'] });
  app.addHook('onRequest', async (req, reply) => {
    const token = bearerToken(req);
    if (!token) throw errors.unauthorized();
    const agentId = parseId((req.params as { agentId?: string }).agentId);
    const agent = agentId === null ? null : await app.ctx.agents.get(agentId);
    if (!agent || !secretMatches(token, agent.ingest_key_digest)) throw errors.unauthorized();
    req.agent = agent;
    const rl = req.routeOptions.config.rateLimit;
    if (rl && (await limitRequest(app, req, reply, rl, { agentId: agent.id }))) return reply;
  });
  rememberIdempotentAnswers(app); // the three starting endpoints take an Idempotency-Key
  await app.register(triggerRoute);
  await app.register(triggerAndWaitRoute);
  await app.register(triggerAndDownloadRoute);
  await app.register(registerRoute);
  await app.register(ingestRoute);
}
