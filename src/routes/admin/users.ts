// admin-api.md "Organizations, users, membership": users and their personal sign-in tokens (zones.md).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createUser, createUserToken, getUser, revokeUserToken } from '../../admin/users.ts';
import { IdParams, NAME_MAX, nullable, Text, strict } from './schemas.ts';
import { errors } from '../../errors.ts';
import { User, UserToken, NO_BODY } from './views.ts';
import { ref } from '../../schemas/responses.ts';

const CreateUserBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320, format: 'email' }),
    name: Type.Optional(nullable(Text(NAME_MAX))),
    platform_admin: Type.Optional(Type.Boolean()),
  },
  strict,
);
const CreateTokenBody = Type.Object({ name: Type.Optional(nullable(Text(NAME_MAX))) }, strict);
const TokenParams = Type.Object({ id: Type.String(), tokenId: Type.String() });

export default async function userRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCreateUser = {
    operationId: 'adminCreateUser',
    summary: 'Create a user',
    body: CreateUserBody,
    response: { 201: ref(User) },
    errors: ['conflict'] as const,
  };
  app.post('/users', { schema: adminCreateUser }, async (req, reply) => {
    const user = await createUser(app.ctx, req.body, req.principal!.userId);
    if (!user) throw errors.conflict('a user with this email already exists');
    return reply.code(201).send(user);
  });

  const adminGetUser = {
    operationId: 'adminGetUser',
    summary: 'Read a user',
    params: IdParams,
    response: { 200: ref(User) },
    errors: ['not_found'] as const,
  };
  app.get('/users/:id', { schema: adminGetUser }, async (req) => getUser(app.ctx, req.params.id));

  const adminCreateUserToken = {
    operationId: 'adminCreateUserToken',
    summary: 'Issue a personal sign-in token (shown once)',
    params: IdParams,
    body: CreateTokenBody,
    response: { 201: ref(UserToken) },
    errors: ['not_found'] as const,
  };
  app.post('/users/:id/tokens', { schema: adminCreateUserToken }, async (req, reply) => {
    return reply.code(201).send(await createUserToken(app.ctx, req.params.id, req.body, req.principal!.userId));
  });

  const adminRevokeUserToken = {
    operationId: 'adminRevokeUserToken',
    summary: 'Revoke a personal sign-in token',
    params: TokenParams,
    response: { 204: NO_BODY },
    errors: ['not_found'] as const,
  };
  app.delete('/users/:id/tokens/:tokenId', { schema: adminRevokeUserToken }, async (req, reply) => {
    if (!(await revokeUserToken(app.ctx, req.params.id, req.params.tokenId, req.principal!.userId))) throw errors.notFound('token');
    return reply.code(204).send();
  });
}
