// admin-api.md "Connections": third-party credentials an agent may resolve (spec 4.10). One flat body schema
// with every type's fields; the service refuses fields of another type by name (a oneOf would only say "must
// match exactly one schema").
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createConnection, getConnection, listConnections, removeConnection, updateConnectionSettings } from '../../admin/connections.ts';
import { numericId } from './params.ts';
import { IdParams, JsonObject, nullable, SECRET_MAX, TEXT_MAX, Text, URL_MAX, strict } from './schemas.ts';
import { errors } from '../../errors.ts';
import { Connection, ConnectionCreated, ConnectionList, NO_BODY } from './views.ts';
import { ref } from '../../schemas/responses.ts';

const typeFields = {
  value: Type.Optional(Text(SECRET_MAX)),
  username: Type.Optional(Text(TEXT_MAX)),
  password: Type.Optional(Text(SECRET_MAX)),
  access_token: Type.Optional(Text(SECRET_MAX)),
  refresh_token: Type.Optional(nullable(Text(SECRET_MAX))),
  // ISO 8601 or epoch seconds: the service checks which (a union here would not name the problem).
  expires_at: Type.Optional(Type.Unknown()),
  token_url: Type.Optional(nullable(Text(URL_MAX))),
  client_id: Type.Optional(nullable(Text(TEXT_MAX))),
  client_secret: Type.Optional(nullable(Text(SECRET_MAX))),
  scope: Type.Optional(nullable(Text(TEXT_MAX))),
};

const CreateConnectionBody = Type.Object(
  {
    integration_id: Text(200),
    type: Type.Enum(['api_key', 'basic_auth', 'oauth']),
    ...typeFields,
    extras: Type.Optional(JsonObject),
    active: Type.Optional(Type.Boolean()),
  },
  strict,
);

const UpdateConnectionBody = Type.Object(
  {
    ...typeFields,
    extras: Type.Optional(JsonObject),
    active: Type.Optional(Type.Boolean()),
    integration_id: Type.Optional(Type.Unknown()),
    type: Type.Optional(Type.Unknown()),
  },
  strict,
);

export default async function connectionRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCreateConnection = {
    operationId: 'adminCreateConnection',
    summary: 'Add a third-party credential to an agent',
    params: IdParams,
    body: CreateConnectionBody,
    response: { 201: ref(ConnectionCreated) },
    errors: ['not_found', 'conflict'] as const,
  };
  app.post('/agents/:id/connections', { schema: adminCreateConnection }, async (req, reply) => {
    return reply.code(201).send(await createConnection(app.ctx, numericId(req.params.id, 'agent'), req.body, req.principal!.userId));
  });

  const adminListConnections = {
    operationId: 'adminListConnections',
    summary: 'List an agent’s connections',
    params: IdParams,
    response: { 200: ref(ConnectionList) },
    errors: ['not_found'] as const,
  };
  app.get('/agents/:id/connections', { schema: adminListConnections }, async (req) => listConnections(app.ctx, numericId(req.params.id, 'agent')));

  const adminGetConnection = {
    operationId: 'adminGetConnection',
    summary: 'Read a connection (without its secrets)',
    params: IdParams,
    response: { 200: ref(Connection) },
    errors: ['not_found'] as const,
  };
  app.get('/connections/:id', { schema: adminGetConnection }, async (req) => getConnection(app.ctx, req.params.id));

  const adminUpdateConnection = {
    operationId: 'adminUpdateConnection',
    summary: 'Change a connection (not its integration or type)',
    params: IdParams,
    body: UpdateConnectionBody,
    response: { 200: ref(Connection) },
    errors: ['not_found', 'conflict'] as const,
  };
  app.patch('/connections/:id', { schema: adminUpdateConnection }, async (req) => {
    return updateConnectionSettings(app.ctx, req.params.id, req.body, req.principal!.userId);
  });

  const adminDeleteConnection = {
    operationId: 'adminDeleteConnection',
    summary: 'Remove a connection',
    params: IdParams,
    response: { 204: NO_BODY },
    errors: ['not_found'] as const,
  };
  app.delete('/connections/:id', { schema: adminDeleteConnection }, async (req, reply) => {
    if (!(await removeConnection(app.ctx, req.params.id, req.principal!.userId))) throw errors.notFound('connection');
    return reply.code(204).send();
  });
}
