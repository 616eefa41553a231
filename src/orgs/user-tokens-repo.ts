// Personal sign-in tokens (zones.md "Users reach the platform") looked up by digest. Creating and revoking them is
// the admin API's (users-repo.ts); this file only answers "whose token is this?".
import type { Queryable } from '../storage/db.ts';

export interface TokenUser {
  id: string;
  platform_admin: boolean;
}

/** The user a token digest belongs to; null for an unknown or revoked (deleted) token. */
export async function findUserByTokenDigest(q: Queryable, tokenDigest: Buffer): Promise<TokenUser | null> {
  const { rows } = await q.query<TokenUser>(
    'SELECT u.id, u.platform_admin FROM user_tokens t JOIN users u ON u.id = t.user_id WHERE t.token_digest = $1',
    [tokenDigest],
  );
  return rows[0] ?? null;
}
