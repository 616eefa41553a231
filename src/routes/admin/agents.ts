// admin-api.md "Agents": create, read and change agents. Secrets only in the answer that creates them.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createAgent, getAgent, updateAgent } from '../../admin/agents.ts';
import { numericId } from './params.ts';
import { IdParams, JsonObject, NAME_MAX, nullable, PositiveInt, TEXT_MAX, Text, URL_MAX, Uuid, strict } from './schemas.ts';
import { Agent, CreatedAgent } from './views.ts';
import { ref } from '../../schemas/responses.ts';

// Spec 8.2 and admin-api.md: Max run duration at most 24 h; poll interval 10 to 3600 s.
const settable = {
  name: Text(NAME_MAX),
  managed_by: Type.Enum(['platform', 'standalone']),
  status: Type.Enum(['active', 'paused', 'archived']),
  runtime_id: nullable(PositiveInt),
  target: nullable(Text(TEXT_MAX)),
  allow_external_triggers: Type.Boolean(),
  allow_webhook_triggers: Type.Boolean(),
  output_kind: Type.Enum(['json', 'file_download']),
  running_timeout_ms: Type.Integer({ minimum: 1, maximum: 86_400_000 }),
  poll_interval_s: Type.Integer({ minimum: 10, maximum: 3600 }),
  default_input: JsonObject,
  zone_app_url: nullable(Text(URL_MAX)),
};

// Everything an agent has besides its identity; optional on create (defaults apply) and on update.
const optionalSettings = {
  status: Type.Optional(settable.status),
  runtime_id: Type.Optional(settable.runtime_id),
  target: Type.Optional(settable.target),
  allow_external_triggers: Type.Optional(settable.allow_external_triggers),
  allow_webhook_triggers: Type.Optional(settable.allow_webhook_triggers),
  output_kind: Type.Optional(settable.output_kind),
  running_timeout_ms: Type.Optional(settable.running_timeout_ms),
  poll_interval_s: Type.Optional(settable.poll_interval_s),
  default_input: Type.Optional(settable.default_input),
  zone_app_url: Type.Optional(settable.zone_app_url),
};

const CreateAgentBody = Type.Object({ org_id: Uuid, name: settable.name, managed_by: settable.managed_by, ...optionalSettings }, strict);

// org_id is listed so the service can answer "cannot be changed" rather than "unknown field".
const UpdateAgentBody = Type.Object(
  { org_id: Type.Optional(Type.Unknown()), name: Type.Optional(settable.name), managed_by: Type.Optional(settable.managed_by), ...optionalSettings },
  strict,
);

export default async function agentAdminRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCreateAgent = {
    operationId: 'adminCreateAgent',
    summary: 'Create an agent; its secrets are shown in this answer only',
    body: CreateAgentBody,
    response: { 201: ref(CreatedAgent) },
    errors: ['not_found'] as const,
  };
  app.post('/agents', { schema: adminCreateAgent }, async (req, reply) => {
    return reply.code(201).send(await createAgent(app.ctx, req.body, req.principal!.userId));
  });

  const adminGetAgent = {
    operationId: 'adminGetAgent',
    summary: 'Read an agent',
    params: IdParams,
    response: { 200: ref(Agent) },
    errors: ['not_found'] as const,
  };
  app.get('/agents/:id', { schema: adminGetAgent }, async (req) => getAgent(app.ctx, numericId(req.params.id, 'agent')));

  const adminUpdateAgent = {
    operationId: 'adminUpdateAgent',
    summary: 'Change an agent',
    params: IdParams,
    body: UpdateAgentBody,
    response: { 200: ref(Agent) },
    errors: ['not_found'] as const,
  };
  app.patch('/agents/:id', { schema: adminUpdateAgent }, async (req) => {
    return updateAgent(app.ctx, numericId(req.params.id, 'agent'), req.body, req.principal!.userId);
  });
}
