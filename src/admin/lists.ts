// The console's lists (issue 14): agents, organizations, users and runtimes, paged like GET /runs and searched by
// name (issue 40 item 1). Each item is shown by the presenter its GET-one uses, so a list never shows more (a
// secret) or less than the item's own page.
//
// `scope` is for a later caller that may see only some organizations (org-scoped roles); the admin token sees all.
// A filter outside the scope is an empty page, not an error: a filter is not a resource.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { listAgents } from '../agents/agents-repo.ts';
import { listOrgs } from '../orgs/orgs-repo.ts';
import { listUsers } from '../orgs/users-repo.ts';
import { listRuntimes } from '../runtimes/runtimes-repo.ts';
import type { RuntimeKind } from '../runtimes/runtime-adapter.ts';
import { agentView, type AgentView } from './agents.ts';
import { orgView, type OrgView } from './orgs.ts';
import { userView, type UserView } from './users.ts';
import { runtimeView, type RuntimeView } from './runtimes.ts';
import { createdPosition, decodeCreatedCursor, decodeIdCursor, pageOf, PAGE_DEFAULT, type Page } from './page-cursor.ts';

export interface OrgScope {
  orgIds: string[];
}

export interface PageQuery {
  limit?: number;
  cursor?: string;
  scope?: OrgScope;
  /** Issue 40 item 1: a case-insensitive substring of the name (users: of the name or the email), taken literally. */
  search?: string;
}

export interface AgentListQuery extends PageQuery {
  orgId?: string;
  runtimeId?: number;
  managedBy?: AgentRow['managed_by'];
  status?: AgentRow['status'];
  /** Issue 40 item 1: only these agents, so a page of runs can name its agents however many agents there are. */
  ids?: number[];
}

export async function listAgentsPage(ctx: AppContext, q: AgentListQuery): Promise<Page<AgentView>> {
  const limit = q.limit ?? PAGE_DEFAULT;
  const rows = await listAgents(ctx.db, {
    orgIds: orgIdsOf(q.orgId, q.scope),
    runtimeId: q.runtimeId,
    managedBy: q.managedBy,
    status: q.status,
    ids: q.ids,
    nameContains: q.search,
    beforeId: q.cursor === undefined ? undefined : decodeIdCursor('agents', q.cursor),
    limit: limit + 1,
  });
  return pageOf(rows, limit, 'agents', (r) => String(r.id), agentView);
}

export async function listRuntimesPage(ctx: AppContext, q: PageQuery & { orgId?: string; kind?: RuntimeKind }): Promise<Page<RuntimeView>> {
  const limit = q.limit ?? PAGE_DEFAULT;
  const rows = await listRuntimes(ctx.db, {
    orgIds: orgIdsOf(q.orgId, q.scope),
    kind: q.kind,
    nameContains: q.search,
    beforeId: q.cursor === undefined ? undefined : decodeIdCursor('runtimes', q.cursor),
    limit: limit + 1,
  });
  return pageOf(rows, limit, 'runtimes', (r) => String(r.id), runtimeView);
}

export async function listOrgsPage(ctx: AppContext, q: PageQuery): Promise<Page<OrgView>> {
  const limit = q.limit ?? PAGE_DEFAULT;
  const before = q.cursor === undefined ? undefined : decodeCreatedCursor('orgs', q.cursor);
  const rows = await listOrgs(ctx.db, { orgIds: q.scope?.orgIds, nameContains: q.search, before, limit: limit + 1 });
  return pageOf(rows, limit, 'orgs', (r) => createdPosition({ createdUs: r.created_us, id: r.id }), orgView);
}

/** With `orgId`, the organization's members. */
export async function listUsersPage(ctx: AppContext, q: PageQuery & { orgId?: string }): Promise<Page<UserView>> {
  const limit = q.limit ?? PAGE_DEFAULT;
  const before = q.cursor === undefined ? undefined : decodeCreatedCursor('users', q.cursor);
  const rows = await listUsers(ctx.db, { memberOf: orgIdsOf(q.orgId, q.scope), nameContains: q.search, before, limit: limit + 1 });
  return pageOf(rows, limit, 'users', (r) => createdPosition({ createdUs: r.created_us, id: r.id }), userView);
}

/** The organizations a list is limited to: the filter, the scope, or the filter within the scope. */
function orgIdsOf(orgId: string | undefined, scope: OrgScope | undefined): string[] | undefined {
  const filter = orgId?.toLowerCase();
  if (!scope) return filter === undefined ? undefined : [filter];
  return filter === undefined ? scope.orgIds : scope.orgIds.filter((id) => id === filter);
}
