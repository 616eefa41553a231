// Organizations and membership (admin-api.md "Organizations, users, membership").
import { randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { deleteMembership, findOrg, insertMembershipOnce, insertOrg, type MemberRole, type OrgRow } from '../orgs/orgs-repo.ts';
import { findUser } from '../orgs/users-repo.ts';
import { isoOrNull } from '../runs/run-view.ts';
import { isUuid } from '../lib/uuid.ts';

export interface OrgView {
  id: string;
  name: string;
  created_at: string;
}

export interface MembershipView {
  org_id: string;
  user_id: string;
  role: MemberRole;
}

export function orgView(row: OrgRow): OrgView {
  return { id: row.id, name: row.name, created_at: isoOrNull(row.created_at)! };
}

export async function createOrg(ctx: AppContext, body: { name: string }, actorUserId: string | null): Promise<OrgView> {
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    const org = await insertOrg(tx, { id: randomUUID(), name: body.name, now });
    await appendAudit(tx, { action: 'org.created', actorUserId, details: { org_id: org.id } }, now);
    return org;
  });
  return orgView(row);
}

export async function getOrg(ctx: AppContext, orgId: string): Promise<OrgView> {
  const org = isUuid(orgId) ? await findOrg(ctx.db, orgId) : null;
  if (!org) throw errors.notFound('organization');
  return orgView(org);
}

/** Null when the user already belongs to the organization (409: remove and add again to change the role). */
export async function addMember(
  ctx: AppContext,
  orgId: string,
  body: { user_id: string; role?: MemberRole },
  actorUserId: string | null,
): Promise<MembershipView | null> {
  if (!isUuid(orgId) || !(await findOrg(ctx.db, orgId))) throw errors.notFound('organization');
  if (!(await findUser(ctx.db, body.user_id.toLowerCase()))) throw errors.notFound('user');
  const now = ctx.clock.now();
  const role = body.role ?? 'member';
  const row = await ctx.db.transaction(async (tx) => {
    const m = await insertMembershipOnce(tx, { orgId, userId: body.user_id.toLowerCase(), role, now });
    if (m) await appendAudit(tx, { action: 'org.member_added', actorUserId, details: { org_id: orgId, user_id: m.user_id, role } }, now);
    return m;
  });
  if (!row) return null;
  return { org_id: row.org_id, user_id: row.user_id, role: row.role };
}

/** False when there was no such membership. */
export async function removeMember(ctx: AppContext, orgId: string, userId: string, actorUserId: string | null): Promise<boolean> {
  if (!isUuid(orgId) || !isUuid(userId)) return false;
  const now = ctx.clock.now();
  const removed = await ctx.db.transaction(async (tx) => {
    const gone = await deleteMembership(tx, orgId, userId.toLowerCase());
    if (gone) await appendAudit(tx, { action: 'org.member_removed', actorUserId, details: { org_id: orgId, user_id: userId.toLowerCase() } }, now);
    return gone;
  });
  return removed;
}
