// admin-api.md "Runs and audit": the audit log, newest first, in pages (`limit`, `cursor`; issue 40 item 1).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { listAuditEntries } from '../../admin/audit.ts';
import { PAGE_MAX } from '../../admin/page-cursor.ts';
import { queryInt } from './params.ts';
import { DigitsParam } from './schemas.ts';
import { AuditPage } from './views.ts';
import { ref } from '../../schemas/responses.ts';
import { orgScope } from '../../orgs/principal.ts';

const AuditQuery = Type.Object({
  agent_id: Type.Optional(DigitsParam),
  action: Type.Optional(Type.String({ minLength: 1, maxLength: 200, pattern: '^[^\\u0000]*$' })),
  limit: Type.Optional(Type.String({ maxLength: 16 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});

export default async function auditRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminListAudit = {
    operationId: 'adminListAudit',
    summary: 'Read the audit log, newest first, in pages (cursor)',
    querystring: AuditQuery,
    response: { 200: ref(AuditPage) },
  };
  app.get('/audit', { schema: adminListAudit }, async (req) => {
    const q = req.query;
    return listAuditEntries(app.ctx, {
      agentId: queryInt(q.agent_id, 'agent_id', 1, Number.MAX_SAFE_INTEGER),
      action: q.action,
      limit: queryInt(q.limit, 'limit', 1, PAGE_MAX),
      cursor: q.cursor,
      scope: orgScope(req.principal!),
    });
  });
}
