// Console sessions (migration 0009): a random secret in the cookie, its digest here.
import type { Queryable } from '../storage/db.ts';

export interface SessionSubject {
  session_id: string;
  /** Null: a session of the platform-admin token. */
  user_id: string | null;
  platform_admin: boolean;
  expires_at: Date;
}

export async function insertSession(
  q: Queryable,
  s: { id: string; secretDigest: Buffer; userId: string | null; userTokenId: string | null; adminTokenDigest: Buffer | null; now: Date; expiresAt: Date },
): Promise<void> {
  await q.query(
    `INSERT INTO sessions (id, secret_digest, user_id, user_token_id, admin_token_digest, created_at, expires_at)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [s.id, s.secretDigest, s.userId, s.userTokenId, s.adminTokenDigest, s.now, s.expiresAt],
  );
}

/**
 * The live session a secret opens: not expired, and — for an admin-token session — signed in with the admin token
 * configured now. A user session's token and user still exist (the cascades delete it with either).
 */
export async function findLiveSession(q: Queryable, secretDigest: Buffer, adminTokenDigest: Buffer, now: Date): Promise<SessionSubject | null> {
  const { rows } = await q.query<SessionSubject>(
    `SELECT s.id AS session_id, s.user_id, COALESCE(u.platform_admin, true) AS platform_admin, s.expires_at
     FROM sessions s LEFT JOIN users u ON u.id = s.user_id
     WHERE s.secret_digest = $1 AND s.expires_at > $2 AND (s.user_id IS NOT NULL OR s.admin_token_digest = $3)`,
    [secretDigest, now, adminTokenDigest],
  );
  return rows[0] ?? null;
}

/** Sign-out: the row goes, so the secret opens nothing any more. */
export async function deleteSession(q: Queryable, secretDigest: Buffer): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM sessions WHERE secret_digest = $1', [secretDigest]);
  return rowCount > 0;
}

/** Expired sessions are of no use to anyone; each sign-in clears a bounded batch of them. */
export async function deleteExpiredSessions(q: Queryable, now: Date, limit = 1000): Promise<void> {
  await q.query('DELETE FROM sessions WHERE id IN (SELECT id FROM sessions WHERE expires_at <= $1 LIMIT $2)', [now, limit]);
}

export type OrgRole = 'admin' | 'member';

/** A user's organizations with the role and the organization's name (for the console's header and pickers). */
export async function membershipsOf(q: Queryable, userId: string): Promise<Array<{ org_id: string; org_name: string; role: OrgRole }>> {
  const { rows } = await q.query<{ org_id: string; org_name: string; role: OrgRole }>(
    `SELECT m.org_id, o.name AS org_name, m.role FROM memberships m JOIN organizations o ON o.id = m.org_id
     WHERE m.user_id = $1 ORDER BY o.name, m.org_id`,
    [userId],
  );
  return rows;
}

/** A live user session by its id (the console's zone frames name it: zones/zone-frame-pass.ts). */
export async function findLiveUserSessionById(q: Queryable, id: string, now: Date): Promise<SessionSubject | null> {
  const { rows } = await q.query<SessionSubject>(
    `SELECT s.id AS session_id, s.user_id, u.platform_admin, s.expires_at
     FROM sessions s JOIN users u ON u.id = s.user_id
     WHERE s.id = $1 AND s.expires_at > $2`,
    [id, now],
  );
  return rows[0] ?? null;
}
