// admin-api.md "Webhook actions": the signing secret is shown once, in the answer that creates the action.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createWebhookAction, listWebhookActions, removeWebhookAction } from '../../admin/webhook-actions.ts';
import { numericId } from './params.ts';
import { IdParams, Text, URL_MAX, strict } from './schemas.ts';
import { errors } from '../../errors.ts';

const CreateWebhookActionBody = Type.Object(
  { on_state: Type.Enum(['completed', 'failed', 'cancelled', 'waiting']), url: Text(URL_MAX) },
  strict,
);

export default async function webhookActionRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/agents/:id/webhook-actions', { schema: { params: IdParams, body: CreateWebhookActionBody } }, async (req, reply) => {
    return reply.code(201).send(await createWebhookAction(app.ctx, numericId(req.params.id, 'agent'), req.body));
  });

  app.get('/agents/:id/webhook-actions', { schema: { params: IdParams } }, async (req) => {
    return listWebhookActions(app.ctx, numericId(req.params.id, 'agent'));
  });

  app.delete('/webhook-actions/:id', { schema: { params: IdParams } }, async (req, reply) => {
    if (!(await removeWebhookAction(app.ctx, req.params.id))) throw errors.notFound('webhook action');
    return reply.code(204).send();
  });
}
