// Users and their personal sign-in tokens (zones.md "Users reach the platform"); tokens are kept as digests only.
import type { Queryable } from '../storage/db.ts';
import { CREATED_US, createdBefore, nameContains, sqlWhere } from '../storage/sql-where.ts';

export interface UserRow {
  id: string;
  email: string;
  name: string | null;
  platform_admin: boolean;
  created_at: Date;
}

export interface UserTokenRow {
  id: string;
  user_id: string;
  name: string | null;
  created_at: Date;
}

/** Null when the email is taken: the unique index is on lower(email), so the check is case-insensitive. */
export async function insertUserOnce(
  q: Queryable,
  u: { id: string; email: string; name: string | null; platformAdmin: boolean; now: Date },
): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>(
    `INSERT INTO users (id, email, name, platform_admin, created_at) VALUES ($1, $2, $3, $4, $5)
     ON CONFLICT DO NOTHING RETURNING *`,
    [u.id, u.email, u.name, u.platformAdmin, u.now],
  );
  return rows[0] ?? null;
}

export async function findUser(q: Queryable, id: string): Promise<UserRow | null> {
  const { rows } = await q.query<UserRow>('SELECT * FROM users WHERE id = $1', [id]);
  return rows[0] ?? null;
}

export async function insertUserToken(
  q: Queryable,
  t: { id: string; userId: string; name: string | null; tokenDigest: Buffer; now: Date },
): Promise<UserTokenRow> {
  const { rows } = await q.query<UserTokenRow>(
    `INSERT INTO user_tokens (id, user_id, name, token_digest, created_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING id, user_id, name, created_at`,
    [t.id, t.userId, t.name, t.tokenDigest, t.now],
  );
  return rows[0]!;
}

/** Revokes at once: the row is gone, so the digest no longer matches anything. */
export async function deleteUserToken(q: Queryable, userId: string, tokenId: string): Promise<boolean> {
  const { rowCount } = await q.query('DELETE FROM user_tokens WHERE id = $1 AND user_id = $2', [tokenId, userId]);
  return rowCount > 0;
}

// Sign-in (zones.md "Users reach the platform"): a personal token is looked up by its digest.
export interface TokenUser {
  id: string;
  platform_admin: boolean;
  /** The personal token that signed in (a session made from it ends when it is revoked). */
  token_id: string;
}

/** The user a token digest belongs to; null for an unknown or revoked (deleted) token. */
export async function findUserByTokenDigest(q: Queryable, tokenDigest: Buffer): Promise<TokenUser | null> {
  const { rows } = await q.query<TokenUser>(
    'SELECT u.id, u.platform_admin, t.id AS token_id FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = $1',
    [tokenDigest],
  );
  return rows[0] ?? null;
}

/**
 * The admin list (issue 14): newest first by creation, then id (uuids are random), keyset-paginated; with
 * `memberOf`, only members of those organizations.
 */
export async function listUsers(
  q: Queryable,
  f: { memberOf?: string[]; nameContains?: string; before?: { createdUs: string; id: string }; limit: number },
): Promise<Array<UserRow & { created_us: string }>> {
  const params: unknown[] = [];
  const where = sqlWhere(params, (p) => [
    f.memberOf !== undefined && `EXISTS (SELECT 1 FROM memberships m WHERE m.user_id = users.id AND m.org_id = ANY(${p(f.memberOf)}::uuid[]))`,
    nameContains(p, ['name', 'email'], f.nameContains),
    createdBefore(p, f.before),
  ]);
  const { rows } = await q.query<UserRow & { created_us: string }>(
    `SELECT *, ${CREATED_US} FROM users ${where} ORDER BY created_at DESC, id DESC LIMIT $${params.push(f.limit)}`,
    params,
  );
  return rows;
}
