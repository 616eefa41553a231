// admin-api.md "Organizations, users, membership": organizations and their members.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { addMember, createOrg, getOrg, removeMember } from '../../admin/orgs.ts';
import { IdParams, NAME_MAX, Text, Uuid, strict } from './schemas.ts';
import { errors } from '../../errors.ts';

const CreateOrgBody = Type.Object({ name: Text(NAME_MAX) }, strict);
const AddMemberBody = Type.Object({ user_id: Uuid, role: Type.Optional(Type.Enum(['admin', 'member'])) }, strict);
const MemberParams = Type.Object({ orgId: Type.String(), userId: Type.String() });

export default async function orgRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/orgs', { schema: { body: CreateOrgBody } }, async (req, reply) => {
    return reply.code(201).send(await createOrg(app.ctx, req.body));
  });

  app.get('/orgs/:id', { schema: { params: IdParams } }, async (req) => getOrg(app.ctx, req.params.id));

  app.post('/orgs/:id/members', { schema: { params: IdParams, body: AddMemberBody } }, async (req, reply) => {
    const member = await addMember(app.ctx, req.params.id, req.body);
    if (!member) throw errors.conflict('the user is already a member of this organization');
    return reply.code(201).send(member);
  });

  app.delete('/orgs/:orgId/members/:userId', { schema: { params: MemberParams } }, async (req, reply) => {
    if (!(await removeMember(app.ctx, req.params.orgId, req.params.userId))) throw errors.notFound('membership');
    return reply.code(204).send();
  });
}
