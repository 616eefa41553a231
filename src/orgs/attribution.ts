// "Must be a member of the agent's organization or a platform admin. Otherwise it is dropped silently."
// (spec 4.1, 4.4, 4.5, 4.9). Returns the user id to record, or null.
import type { Queryable } from '../storage/db.ts';
import { isUuid } from '../lib/uuid.ts';
import { findMemberOrAdmin } from './orgs-repo.ts';

export async function attributableUser(q: Queryable, orgId: string, userId: unknown): Promise<string | null> {
  return isUuid(userId) ? findMemberOrAdmin(q, orgId, userId.toLowerCase()) : null;
}
