// admin-api.md "Webhook actions": the signing secret is shown once, in the answer that creates the action.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createWebhookAction, listWebhookActions, removeWebhookAction } from '../../admin/webhook-actions.ts';
import { numericId } from './params.ts';
import { IdParams, Text, URL_MAX, strict } from './schemas.ts';
import { errors } from '../../errors.ts';
import { WebhookActionCreated, WebhookActionList, NO_BODY } from './views.ts';
import { ref } from '../../schemas/responses.ts';

const CreateWebhookActionBody = Type.Object(
  { on_state: Type.Enum(['completed', 'failed', 'cancelled', 'waiting']), url: Text(URL_MAX) },
  strict,
);

export default async function webhookActionRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCreateWebhookAction = {
    operationId: 'adminCreateWebhookAction',
    summary: 'Add a webhook action; its signing secret is shown in this answer only',
    params: IdParams,
    body: CreateWebhookActionBody,
    response: { 201: ref(WebhookActionCreated) },
    errors: ['not_found'] as const,
  };
  app.post('/agents/:id/webhook-actions', { schema: adminCreateWebhookAction }, async (req, reply) => {
    return reply.code(201).send(await createWebhookAction(app.ctx, numericId(req.params.id, 'agent'), req.body, req.principal!.userId));
  });

  const adminListWebhookActions = {
    operationId: 'adminListWebhookActions',
    summary: 'List an agent’s webhook actions',
    params: IdParams,
    response: { 200: ref(WebhookActionList) },
    errors: ['not_found'] as const,
  };
  app.get('/agents/:id/webhook-actions', { schema: adminListWebhookActions }, async (req) => {
    return listWebhookActions(app.ctx, numericId(req.params.id, 'agent'));
  });

  const adminDeleteWebhookAction = {
    operationId: 'adminDeleteWebhookAction',
    summary: 'Remove a webhook action',
    params: IdParams,
    response: { 204: NO_BODY },
    errors: ['not_found'] as const,
  };
  app.delete('/webhook-actions/:id', { schema: adminDeleteWebhookAction }, async (req, reply) => {
    if (!(await removeWebhookAction(app.ctx, req.params.id, req.principal!.userId))) throw errors.notFound('webhook action');
    return reply.code(204).send();
  });
}
