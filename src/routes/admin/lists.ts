// Issue 14: the console's lists. GET /agents, /orgs, /users and /runtimes answer {data, next_cursor}, newest first,
// paged and filtered as GET /runs is (admin-api.md "Runs and audit"); each item as its GET-one shows it.
// Issue 40 item 1: `q` searches each by name, within the same pages; `ids` on /agents names a page of runs' agents.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { orgScope } from '../../orgs/principal.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type TSchema } from 'typebox';
import { listAgentsPage, listOrgsPage, listRuntimesPage, listUsersPage } from '../../admin/lists.ts';
import { PAGE_MAX } from '../../admin/page-cursor.ts';
import { queryIds, queryInt } from './params.ts';
import { DigitsParam, IdsParam, SearchParam, Uuid } from './schemas.ts';
import { Agent, Org, Runtime, User } from './views.ts';
import { nullable, ref } from '../../schemas/responses.ts';

const paging = {
  limit: Type.Optional(Type.String({ maxLength: 16 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
  q: Type.Optional(SearchParam),
};
const AgentQuery = Type.Object({
  ...paging,
  org_id: Type.Optional(Uuid),
  runtime_id: Type.Optional(DigitsParam),
  managed_by: Type.Optional(Type.Enum(['platform', 'standalone'])),
  status: Type.Optional(Type.Enum(['active', 'paused', 'archived'])),
  ids: Type.Optional(IdsParam),
});
const RuntimeQuery = Type.Object({ ...paging, org_id: Type.Optional(Uuid), kind: Type.Optional(Type.Enum(['workflow', 'task'])) });
const UserQuery = Type.Object({ ...paging, org_id: Type.Optional(Uuid) });
const OrgQuery = Type.Object(paging);

const page = (q: { limit?: string; cursor?: string; q?: string }, req: FastifyRequest) => ({
  limit: queryInt(q.limit, 'limit', 1, PAGE_MAX),
  cursor: q.cursor,
  search: q.q,
  scope: orgScope(req.principal!),
});
/** `{data: [...], next_cursor}` (admin/page-cursor.ts), each item the named component its GET-one answers. */
const answers = (item: TSchema) => ({ 200: Type.Object({ data: Type.Array(ref(item)), next_cursor: nullable(Type.String()) }, { additionalProperties: false }) });

// A filter naming nothing (an unknown org_id or runtime_id) is an empty page: a filter is not a resource.
export default async function listRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/agents', { schema: { operationId: 'adminListAgents', summary: 'List agents, newest first; search by name (q) or pick by id (ids)', querystring: AgentQuery, response: answers(Agent) } }, async (req) => {
    const q = req.query;
    return listAgentsPage(app.ctx, {
      ...page(q, req),
      orgId: q.org_id,
      runtimeId: queryInt(q.runtime_id, 'runtime_id', 1, Number.MAX_SAFE_INTEGER),
      managedBy: q.managed_by,
      status: q.status,
      ids: queryIds(q.ids),
    });
  });

  app.get('/runtimes', { schema: { operationId: 'adminListRuntimes', summary: 'List runtimes, newest first; search by name (q)', querystring: RuntimeQuery, response: answers(Runtime) } }, async (req) => {
    return listRuntimesPage(app.ctx, { ...page(req.query, req), orgId: req.query.org_id, kind: req.query.kind });
  });

  app.get('/orgs', { schema: { operationId: 'adminListOrgs', summary: 'List organizations, newest first; search by name (q)', querystring: OrgQuery, response: answers(Org) } }, async (req) => listOrgsPage(app.ctx, page(req.query, req)));

  app.get('/users', { schema: { operationId: 'adminListUsers', summary: 'List users, newest first; search by name or email (q)', querystring: UserQuery, response: answers(User) } }, async (req) => {
    return listUsersPage(app.ctx, { ...page(req.query, req), orgId: req.query.org_id });
  });
}
