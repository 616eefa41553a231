// Organizations and memberships (decisions.md "Identity and tenancy").
import type { Queryable } from '../storage/db.ts';
import { CREATED_US, createdBefore, nameContains, sqlWhere } from '../storage/sql-where.ts';

export interface OrgRow {
  id: string;
  name: string;
  created_at: Date;
}

export type MemberRole = 'admin' | 'member';

export interface MembershipRow {
  org_id: string;
  user_id: string;
  role: MemberRole;
  created_at: Date;
}

export async function insertOrg(q: Queryable, org: { id: string; name: string; now: Date }): Promise<OrgRow> {
  const { rows } = await q.query<OrgRow>('INSERT INTO organizations (id, name, created_at) VALUES ($1, $2, $3) RETURNING *', [
    org.id,
    org.name,
    org.now,
  ]);
  return rows[0]!;
}

export async function findOrg(q: Queryable, id: string): Promise<OrgRow | null> {
  const { rows } = await q.query<OrgRow>('SELECT * FROM organizations WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/** Null when the user is already a member (the primary key holds). */
export async function insertMembershipOnce(
  q: Queryable,
  m: { orgId: string; userId: string; role: MemberRole; now: Date },
): Promise<MembershipRow | null> {
  const { rows } = await q.query<MembershipRow>(
    `INSERT INTO memberships (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
     ON CONFLICT (org_id, user_id) DO NOTHING RETURNING *`,
    [m.orgId, m.userId, m.role, m.now],
  );
  return rows[0] ?? null;
}

export async function deleteMembership(q: Queryable, orgId: string, userId: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM memberships WHERE org_id = $1 AND user_id = $2', [orgId, userId]);
  return rowCount > 0;
}

/** The user, if it is a platform admin or a member of the organization (spec 4.1 attribution); else null. */
export async function findMemberOrAdmin(q: Queryable, orgId: string, userId: string): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    `SELECT u.id FROM users u
     WHERE u.id = $1 AND (u.platform_admin OR EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id AND m.org_id = $2))`,
    [userId, orgId],
  );
  return rows[0]?.id ?? null;
}

/** The admin list (issue 14): newest first by creation, then id (uuids are random), keyset-paginated. */
export async function listOrgs(
  q: Queryable,
  f: { orgIds?: string[]; nameContains?: string; before?: { createdUs: string; id: string }; limit: number },
): Promise<Array<OrgRow & { created_us: string }>> {
  const params: unknown[] = [];
  const where = sqlWhere(params, (p) => [
    f.orgIds !== undefined && `id = ANY(${p(f.orgIds)}::uuid[])`,
    nameContains(p, ['name'], f.nameContains),
    createdBefore(p, f.before),
  ]);
  const { rows } = await q.query<OrgRow & { created_us: string }>(
    `SELECT *, ${CREATED_US} FROM organizations ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.push(f.limit)}`,
    params,
  );
  return rows;
}
