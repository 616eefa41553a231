// Issue 14: a run's outbound deliveries (GET /runs/{runId}/deliveries) and a redeliver call (202: queued again;
// the outbox worker sends it).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listDeliveries, redeliver } from '../../admin/deliveries.ts';
import { numericId } from './params.ts';
import { nullable as Nullable } from '../../schemas/responses.ts';

const Timestamp = Type.String({ format: 'date-time' });
const Delivery = Type.Object({
  id: Type.Integer(),
  webhook_action_id: Nullable(Type.String()),
  event: Type.String(),
  attempts: Type.Integer(),
  next_attempt_at: Timestamp,
  delivered_at: Nullable(Timestamp),
  failed_at: Nullable(Timestamp),
  last_error: Nullable(Type.String()),
  created_at: Timestamp,
});
const RunParams = Type.Object({ runId: Type.String() });
const DeliveryParams = Type.Object({ runId: Type.String(), deliveryId: Type.String() });

export default async function deliveryRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const listed = { 200: Type.Object({ data: Type.Array(Delivery) }) };
  app.get('/runs/:runId/deliveries', { schema: { operationId: 'adminListRunDeliveries', summary: 'The run\'s webhook-action deliveries', params: RunParams, response: listed, errors: ['not_found'] } }, async (req) => {
    return listDeliveries(app.ctx, numericId(req.params.runId, 'run'));
  });

  const queued = { 202: Delivery };
  app.post('/runs/:runId/deliveries/:deliveryId/redeliver', { schema: { operationId: 'adminRedeliver', summary: 'Send a delivery again (same webhook-id)', params: DeliveryParams, response: queued, errors: ['not_found', 'conflict'] } }, async (req, reply) => {
    const delivery = await redeliver(app.ctx, numericId(req.params.runId, 'run'), numericId(req.params.deliveryId, 'delivery'), req.principal!.userId);
    return reply.code(202).send(delivery);
  });
}
