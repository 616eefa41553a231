// /api/agents/{agentId}/runs/webhook[-and-wait]/{webhookToken} (spec 4.6, 4.7): the credential context of the
// webhook token. The path token is the only credential; the Authorization header is never read (spec part 5
// rule 3), it reaches the task untouched. An unknown agent and a wrong token are the same 401.
//
// Bodies: any content type, empty or up to exactly 1 MiB (spec 8.4), taken as raw bytes so the task can verify
// signatures over them. This context replaces every body parser with one that keeps the bytes.
import type { FastifyInstance } from 'fastify';
import { parseId } from '../../http/bearer.ts';
import { errors } from '../../errors.ts';
import { limitRequest } from '../../http/rate-limit.ts';
import { webhookAgentMatches } from '../../webhooks/webhook-run.ts';
import webhookRoutes, { WEBHOOK_BODY_LIMIT } from './webhook.ts';
import { documentRoutes } from '../../http/openapi-routes.ts';

export default async function webhookContext(app: FastifyInstance): Promise<void> {
  // No security scheme: OpenAPI has none for a secret path segment. The webhookToken parameter says so.
  documentRoutes(app, { tag: 'webhooks', security: [], errors: ['unauthorized', 'payload_too_large'], rawBodies: true });
  app.addHook('onRequest', async (req, reply) => {
    const { agentId, webhookToken } = req.params as { agentId?: string; webhookToken?: string };
    const id = parseId(agentId);
    const agent = id === null ? null : await app.ctx.agents.get(id);
    if (!webhookAgentMatches(agent, webhookToken ?? '')) throw errors.unauthorized('unknown agent or webhook token');
    req.agent = agent;
    const rl = req.routeOptions.config.rateLimit;
    if (rl && (await limitRequest(app, req, reply, rl, { agentId: agent.id }))) return reply;
  });

  // Any content type, even a malformed one, is accepted: the parser below sees every body as opaque bytes. The
  // task gets the original header anyway (it is built from the raw header list, not from req.headers).
  app.addHook('preParsing', async (req) => {
    if (req.headers['content-type'] !== undefined) req.headers['content-type'] = 'application/octet-stream';
  });
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: WEBHOOK_BODY_LIMIT }, (_req, body, done) => done(null, body));

  await app.register(webhookRoutes);
}
