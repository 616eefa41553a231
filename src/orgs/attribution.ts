// "Must be a member of the agent's organization or a platform admin. Otherwise it is dropped silently."
// (spec 4.1, 4.4, 4.5, 4.9). Returns the user id to record, or null.
import type { Queryable } from '../storage/db.ts';
import { isUuid } from '../lib/uuid.ts';

export async function attributableUser(q: Queryable, orgId: string, userId: unknown): Promise<string | null> {
  if (!isUuid(userId)) return null;
  const { rows } = await q.query<{ id: string }>(
    `SELECT u.id FROM users u
     WHERE u.id = $1 AND (u.platform_admin OR EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = u.id AND m.org_id = $2))`,
    [userId.toLowerCase(), orgId],
  );
  return rows[0]?.id ?? null;
}
