// admin-api.md "Agents": key rotation and the audited webhook token reveal (spec 2.1, 5).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { KEY_KINDS, revealWebhookToken, rotateAgentKey } from '../../admin/agent-keys.ts';
import { numericId } from './params.ts';
import { IdParams } from './schemas.ts';
import { errors } from '../../errors.ts';
import { RotatedKey, WebhookTokenReveal } from './views.ts';
import { NO_STORE, answer, ref } from '../../schemas/responses.ts';

const RotateParams = Type.Object({ id: Type.String(), kind: Type.Enum(KEY_KINDS as ['ingest', 'agent', 'webhook', 'zone']) });

export default async function agentKeyRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminRotateAgentKey = {
    operationId: 'adminRotateAgentKey',
    summary: 'Rotate one of the agent’s secrets; the old value stops working at once',
    params: RotateParams,
    response: { 200: ref(RotatedKey) },
    errors: ['invalid_body', 'not_found'] as const,
  };
  app.post('/agents/:id/keys/:kind/rotate', { schema: adminRotateAgentKey }, async (req) => {
    const rotated = await rotateAgentKey(app.ctx, numericId(req.params.id, 'agent'), req.params.kind, req.principal!.userId);
    if (!rotated) throw errors.notFound('agent');
    return rotated;
  });

  const adminRevealWebhookToken = {
    operationId: 'adminRevealWebhookToken',
    summary: 'Reveal the agent’s webhook token (audited)',
    params: IdParams,
    response: { 200: answer(WebhookTokenReveal, 'The token.', NO_STORE) },
    errors: ['not_found'] as const,
  };
  // A POST (issue 35): the reveal is audited, so a cross-site link or an image must not be able to cause one.
  app.post('/agents/:id/webhook-token', { schema: adminRevealWebhookToken }, async (req, reply) => {
    // A revealed secret must not linger in a shared cache.
    reply.header('cache-control', 'no-store');
    return revealWebhookToken(app.ctx, numericId(req.params.id, 'agent'), req.principal!.userId);
  });
}
