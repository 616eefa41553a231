// admin-api.md "Organizations, users, membership": organizations and their members.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { addMember, createOrg, getOrg, removeMember } from '../../admin/orgs.ts';
import { IdParams, NAME_MAX, Text, Uuid, strict } from './schemas.ts';
import { errors } from '../../errors.ts';
import { Membership, Org, NO_BODY } from './views.ts';
import { ref } from '../../schemas/responses.ts';

const CreateOrgBody = Type.Object({ name: Text(NAME_MAX) }, strict);
const AddMemberBody = Type.Object({ user_id: Uuid, role: Type.Optional(Type.Enum(['admin', 'member'])) }, strict);
const MemberParams = Type.Object({ orgId: Type.String(), userId: Type.String() });

export default async function orgRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminCreateOrg = {
    operationId: 'adminCreateOrg',
    summary: 'Create an organization',
    body: CreateOrgBody,
    response: { 201: ref(Org) },
  };
  app.post('/orgs', { schema: adminCreateOrg }, async (req, reply) => {
    return reply.code(201).send(await createOrg(app.ctx, req.body, req.principal!.userId));
  });

  const adminGetOrg = {
    operationId: 'adminGetOrg',
    summary: 'Read an organization',
    params: IdParams,
    response: { 200: ref(Org) },
    errors: ['not_found'] as const,
  };
  app.get('/orgs/:id', { schema: adminGetOrg }, async (req) => getOrg(app.ctx, req.params.id));

  const adminAddMember = {
    operationId: 'adminAddMember',
    summary: 'Add a user to an organization',
    params: IdParams,
    body: AddMemberBody,
    response: { 201: ref(Membership) },
    errors: ['not_found', 'conflict'] as const,
  };
  app.post('/orgs/:id/members', { schema: adminAddMember }, async (req, reply) => {
    const member = await addMember(app.ctx, req.params.id, req.body, req.principal!.userId);
    if (!member) throw errors.conflict('the user is already a member of this organization');
    return reply.code(201).send(member);
  });

  const adminRemoveMember = {
    operationId: 'adminRemoveMember',
    summary: 'Remove a user from an organization',
    params: MemberParams,
    response: { 204: NO_BODY },
    errors: ['not_found'] as const,
  };
  app.delete('/orgs/:orgId/members/:userId', { schema: adminRemoveMember }, async (req, reply) => {
    if (!(await removeMember(app.ctx, req.params.orgId, req.params.userId, req.principal!.userId))) throw errors.notFound('membership');
    return reply.code(204).send();
  });
}
