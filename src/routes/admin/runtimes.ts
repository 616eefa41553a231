// admin-api.md "Runtimes": kind and org_id are fixed at creation; secrets are shown only as `_set` flags.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createRuntime, getRuntime, updateRuntimeSettings } from '../../admin/runtimes.ts';
import { numericId } from './params.ts';
import { IdParams, NAME_MAX, nullable, SECRET_MAX, Text, URL_MAX, Uuid, strict } from './schemas.ts';
import { errors } from '../../errors.ts';
import { Runtime } from './views.ts';
import { ref } from '../../schemas/responses.ts';

const Kind = Type.Enum(['workflow', 'task']);

const CreateRuntimeBody = Type.Object(
  {
    org_id: Uuid,
    name: Text(NAME_MAX),
    kind: Kind,
    base_url: Text(URL_MAX),
    api_key: Type.Optional(nullable(Text(SECRET_MAX))),
    alert_secret: Type.Optional(nullable(Text(SECRET_MAX))),
  },
  strict,
);

// org_id and kind are listed so the service can answer "cannot be changed" rather than "unknown field".
const UpdateRuntimeBody = Type.Object(
  {
    name: Type.Optional(Text(NAME_MAX)),
    base_url: Type.Optional(Text(URL_MAX)),
    api_key: Type.Optional(nullable(Text(SECRET_MAX))),
    alert_secret: Type.Optional(nullable(Text(SECRET_MAX))),
    org_id: Type.Optional(Type.Unknown()),
    kind: Type.Optional(Type.Unknown()),
  },
  strict,
);

export default async function runtimeAdminRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCreateRuntime = {
    operationId: 'adminCreateRuntime',
    summary: 'Register a runtime of an organization',
    body: CreateRuntimeBody,
    response: { 201: ref(Runtime) },
    errors: ['not_found'] as const,
  };
  app.post('/runtimes', { schema: adminCreateRuntime }, async (req, reply) => {
    return reply.code(201).send(await createRuntime(app.ctx, req.body, req.principal!.userId));
  });

  const adminGetRuntime = {
    operationId: 'adminGetRuntime',
    summary: 'Read a runtime',
    params: IdParams,
    response: { 200: ref(Runtime) },
    errors: ['not_found'] as const,
  };
  app.get('/runtimes/:id', { schema: adminGetRuntime }, async (req) => getRuntime(app.ctx, numericId(req.params.id, 'runtime')));

  const adminUpdateRuntime = {
    operationId: 'adminUpdateRuntime',
    summary: 'Change a runtime (not its kind or organization)',
    params: IdParams,
    body: UpdateRuntimeBody,
    response: { 200: ref(Runtime) },
    errors: ['not_found'] as const,
  };
  app.patch('/runtimes/:id', { schema: adminUpdateRuntime }, async (req) => {
    const runtime = await updateRuntimeSettings(app.ctx, numericId(req.params.id, 'runtime'), req.body, req.principal!.userId);
    if (!runtime) throw errors.notFound('runtime');
    return runtime;
  });
}
