// admin-api.md "Organizations, users, membership": users and their personal sign-in tokens (zones.md).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { createUser, createUserToken, getUser, revokeUserToken } from '../../admin/users.ts';
import { IdParams, NAME_MAX, Nullable, Text, strict } from './schemas.ts';
import { errors } from '../../errors.ts';

const CreateUserBody = Type.Object(
  {
    email: Type.String({ minLength: 3, maxLength: 320, format: 'email' }),
    name: Type.Optional(Nullable(Text(NAME_MAX))),
    platform_admin: Type.Optional(Type.Boolean()),
  },
  strict,
);
const CreateTokenBody = Type.Object({ name: Type.Optional(Nullable(Text(NAME_MAX))) }, strict);
const TokenParams = Type.Object({ id: Type.String(), tokenId: Type.String() });

export default async function userRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/users', { schema: { body: CreateUserBody } }, async (req, reply) => {
    const user = await createUser(app.ctx, req.body);
    if (!user) throw errors.conflict('a user with this email already exists');
    return reply.code(201).send(user);
  });

  app.get('/users/:id', { schema: { params: IdParams } }, async (req) => getUser(app.ctx, req.params.id));

  app.post('/users/:id/tokens', { schema: { params: IdParams, body: CreateTokenBody } }, async (req, reply) => {
    return reply.code(201).send(await createUserToken(app.ctx, req.params.id, req.body));
  });

  app.delete('/users/:id/tokens/:tokenId', { schema: { params: TokenParams } }, async (req, reply) => {
    if (!(await revokeUserToken(app.ctx, req.params.id, req.params.tokenId))) throw errors.notFound('token');
    return reply.code(204).send();
  });
}
