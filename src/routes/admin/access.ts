// Who may call each admin route (issue 14; docs/security.md "Roles"): one table, read before the body is
// validated, so a user never learns more from a refusal than the role allows. A route missing from the table is
// refused to everyone but platform admins (and test/admin/role-matrix.test.ts fails until it gets a row).
//
//   platform   only platform admins (organizations, users, membership, runtimes' writes)
//   org_admin  an admin of the organization the route names (agents' writes, keys, connections, webhook actions)
//   member     any member of that organization (read agents, runs, dashboard, audit; trigger, replay, resume)
//
// Routes that name no organization (the lists) need only a signed-in user; their handlers show only the
// organizations the user belongs to (orgScope). Another organization's resource is 404, as if it did not exist;
// a visible resource beyond the role is 403.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { AppContext } from '../../context.ts';
import { ApiError, errors } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { isUuid } from '../../lib/uuid.ts';
import { roleIn, type Principal } from '../../orgs/principal.ts';
import { agentOfRun } from '../../runs/runs-repo.ts';
import { findRuntime } from '../../runtimes/runtimes-repo.ts';
import { findConnection } from '../../agents/connections-repo.ts';
import { findWebhookAction } from '../../events/webhook-actions-repo.ts';

export type Need = 'platform' | 'org_admin' | 'member';
type OrgOf = (ctx: AppContext, req: FastifyRequest) => Promise<string | null>;

export interface AccessRule {
  need: Need;
  /** The organization the route's resource belongs to, and the resource's name for the 404. */
  org?: { of: OrgOf; resource: string };
  /** Body fields only a platform admin may set (spec 2.1: allow_external_triggers is "set by a platform admin"). */
  platformFields?: string[];
}

const param = (req: FastifyRequest, name: string): unknown => (req.params as Record<string, unknown>)[name];
/** The organization of an agent (the cached directory), or null. */
const orgOfAgent = async (ctx: AppContext, agentId: number | null | undefined): Promise<string | null> =>
  agentId === null || agentId === undefined ? null : ((await ctx.agents.get(Number(agentId)))?.org_id ?? null);

const orgParam = (name: string): OrgOf => async (_ctx, req) => {
  const id = param(req, name);
  return isUuid(id) ? id.toLowerCase() : null;
};
const agentOrg = (name: string): OrgOf => async (ctx, req) => {
  const id = parseId(param(req, name));
  return orgOfAgent(ctx, id);
};
const runOrg = (name: string): OrgOf => async (ctx, req) => {
  const id = parseId(param(req, name));
  return id === null ? null : orgOfAgent(ctx, await agentOfRun(ctx.db, id));
};
const runtimeOrg = (name: string): OrgOf => async (ctx, req) => {
  const id = parseId(param(req, name));
  return id === null ? null : ((await findRuntime(ctx.db, id))?.org_id ?? null);
};
const connectionOrg = (name: string): OrgOf => async (ctx, req) => {
  const id = param(req, name);
  return isUuid(id) ? orgOfAgent(ctx, (await findConnection(ctx.db, id.toLowerCase()))?.agent_id) : null;
};
const webhookActionOrg = (name: string): OrgOf => async (ctx, req) => {
  const id = param(req, name);
  return isUuid(id) ? orgOfAgent(ctx, (await findWebhookAction(ctx.db, id.toLowerCase()))?.agent_id) : null;
};
/** A create names its organization in the body; one not given as a uuid is the body's fault, named. */
const bodyOrg: OrgOf = async (_ctx, req) => {
  const id = (req.body as { org_id?: unknown } | null)?.org_id;
  if (!isUuid(id)) throw errors.invalid('body.org_id', 'must be the uuid of one of your organizations');
  return id.toLowerCase();
};

const PLATFORM: AccessRule = { need: 'platform' };
const LIST: AccessRule = { need: 'member' };
const member = (of: OrgOf, resource: string): AccessRule => ({ need: 'member', org: { of, resource } });
const orgAdmin = (of: OrgOf, resource: string, platformFields?: string[]): AccessRule => ({ need: 'org_admin', org: { of, resource }, platformFields });
const EXTERNAL_TRIGGERS = ['allow_external_triggers'];

/** Keyed by method and route path under /api/admin; HEAD follows GET. */
export const ACCESS: Readonly<Record<string, AccessRule>> = {
  'GET /orgs': LIST,
  'POST /orgs': PLATFORM,
  'GET /orgs/:id': member(orgParam('id'), 'organization'),
  'POST /orgs/:id/members': PLATFORM,
  'DELETE /orgs/:orgId/members/:userId': PLATFORM,
  'GET /users': PLATFORM,
  'POST /users': PLATFORM,
  'GET /users/:id': PLATFORM,
  'POST /users/:id/tokens': PLATFORM,
  'DELETE /users/:id/tokens/:tokenId': PLATFORM,
  'GET /runtimes': LIST,
  'POST /runtimes': PLATFORM,
  'GET /runtimes/:id': member(runtimeOrg('id'), 'runtime'),
  'PATCH /runtimes/:id': PLATFORM,
  'GET /agents': LIST,
  'POST /agents': orgAdmin(bodyOrg, 'organization', EXTERNAL_TRIGGERS),
  'GET /agents/:id': member(agentOrg('id'), 'agent'),
  'PATCH /agents/:id': orgAdmin(agentOrg('id'), 'agent', EXTERNAL_TRIGGERS),
  'POST /agents/:id/keys/:kind/rotate': orgAdmin(agentOrg('id'), 'agent'),
  'POST /agents/:id/webhook-token': orgAdmin(agentOrg('id'), 'agent'),
  'GET /agents/:id/webhook-actions': orgAdmin(agentOrg('id'), 'agent'),
  'POST /agents/:id/webhook-actions': orgAdmin(agentOrg('id'), 'agent'),
  'DELETE /webhook-actions/:id': orgAdmin(webhookActionOrg('id'), 'webhook action'),
  'GET /agents/:id/connections': orgAdmin(agentOrg('id'), 'agent'),
  'POST /agents/:id/connections': orgAdmin(agentOrg('id'), 'agent'),
  'GET /connections/:id': orgAdmin(connectionOrg('id'), 'connection'),
  'PATCH /connections/:id': orgAdmin(connectionOrg('id'), 'connection'),
  'DELETE /connections/:id': orgAdmin(connectionOrg('id'), 'connection'),
  'POST /agents/:id/runs': member(agentOrg('id'), 'agent'),
  'GET /runs': LIST,
  'GET /runs/events': LIST,
  'GET /runs/:runId': member(runOrg('runId'), 'run'),
  'GET /runs/:runId/logs': member(runOrg('runId'), 'run'),
  'GET /runs/:runId/deliveries': member(runOrg('runId'), 'run'),
  'POST /runs/:runId/replay': member(runOrg('runId'), 'run'),
  'POST /runs/:runId/waitpoint': member(runOrg('runId'), 'run'),
  'POST /runs/:runId/cancel': orgAdmin(runOrg('runId'), 'run'),
  'POST /runs/:runId/deliveries/:deliveryId/redeliver': orgAdmin(runOrg('runId'), 'run'),
  'GET /audit': LIST,
  'GET /dashboard': LIST,
};

/**
 * Issue 40 item 2: what each admin operation needs, as the session tells the console (GET /api/session
 * `permissions`), so its screens leave out what a role cannot do — from this very table, never a copy of it.
 */
export const OPERATION_NEEDS: Readonly<Record<string, Need>> = Object.freeze(
  Object.fromEntries(Object.entries(ACCESS).map(([operation, rule]) => [operation, rule.need])),
);

const forbidden = (why: string) => new ApiError('forbidden', why);

/** The check itself, for one request of a principal that is not a platform admin. */
export async function checkAccess(ctx: AppContext, req: FastifyRequest, p: Principal, rule: AccessRule | undefined): Promise<void> {
  if (p.platformAdmin) return;
  if (!rule || rule.need === 'platform') throw forbidden('only a platform admin may do this');
  if (rule.need === 'org_admin' && ![...p.roles.values()].includes('admin')) throw forbidden('only an admin of the organization may do this');
  if (rule.org) {
    const orgId = await rule.org.of(ctx, req);
    const role = orgId === null ? null : roleIn(p, orgId);
    if (role === null) throw errors.notFound(rule.org.resource);
    if (rule.need === 'org_admin' && role !== 'admin') throw forbidden('only an admin of the organization may do this');
  }
  const body = req.body as Record<string, unknown> | null | undefined;
  for (const field of rule.platformFields ?? []) {
    if (body && typeof body === 'object' && field in body) throw forbidden(`only a platform admin may set ${field}`);
  }
}

/** Installs the table on the admin context: after the body is parsed, before it is validated. */
export function enforceAccess(app: FastifyInstance, prefix: string): void {
  app.addHook('preValidation', async (req) => {
    const method = req.method === 'HEAD' ? 'GET' : req.method;
    const path = (req.routeOptions.url ?? '').slice(prefix.length);
    await checkAccess(app.ctx, req, req.principal!, ACCESS[`${method} ${path}`]);
  });
}
