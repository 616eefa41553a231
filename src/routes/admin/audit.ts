// admin-api.md "Runs and audit": the audit log, newest first.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { AUDIT_PAGE_MAX, listAuditEntries } from '../../admin/audit.ts';
import { queryInt } from './params.ts';
import { DigitsParam } from './schemas.ts';
import { AuditPage } from './views.ts';
import { ref } from '../../schemas/responses.ts';
import { orgScope } from '../../orgs/principal.ts';

const AuditQuery = Type.Object({
  agent_id: Type.Optional(DigitsParam),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$' })),
  limit: Type.Optional(Type.String({ maxLength: 16 })),
});

export default async function auditRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminListAudit = {
    operationId: 'adminListAudit',
    summary: 'Read the audit log, newest first',
    querystring: AuditQuery,
    response: { 200: ref(AuditPage) },
  };
  app.get('/audit', { schema: adminListAudit }, async (req) => {
    const q = req.query;
    return listAuditEntries(app.ctx, {
      agentId: queryInt(q.agent_id, 'agent_id', 1, Number.MAX_SAFE_INTEGER),
      action: q.action,
      limit: queryInt(q.limit, 'limit', 1, AUDIT_PAGE_MAX),
      scope: orgScope(req.principal!),
    });
  });
}
