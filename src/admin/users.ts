// Users and their personal sign-in tokens (admin-api.md; zones.md "Users reach the platform"). A token is shown
// once, in the answer that creates it; only its SHA-256 digest is kept.
import { randomBytes, randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { digest } from '../lib/secrets.ts';
import { appendAudit } from '../orgs/audit-repo.ts';
import { deleteUserToken, findUser, insertUserOnce, insertUserToken, type UserRow } from '../orgs/users-repo.ts';
import { isUuid } from '../lib/uuid.ts';

/** Prefixed like the agent keys, so a leaked one is recognizable (and scannable). */
export const USER_TOKEN_PREFIX = 'ars_user_';

export interface UserView {
  id: string;
  email: string;
  name: string | null;
  platform_admin: boolean;
}

export function userView(row: UserRow): UserView {
  return { id: row.id, email: row.email, name: row.name ?? null, platform_admin: row.platform_admin };
}

/** Null when the email is taken (409), compared case-insensitively. The email is kept as written. */
export async function createUser(
  ctx: AppContext,
  body: { email: string; name?: string | null; platform_admin?: boolean },
  actorUserId: string | null,
): Promise<UserView | null> {
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    const user = await insertUserOnce(tx, {
      id: randomUUID(),
      email: body.email,
      name: body.name ?? null,
      platformAdmin: body.platform_admin ?? false,
      now,
    });
    if (user) await appendAudit(tx, { action: 'user.created', actorUserId, details: { user_id: user.id, platform_admin: user.platform_admin } }, now);
    return user;
  });
  return row ? userView(row) : null;
}

export async function getUser(ctx: AppContext, userId: string): Promise<UserView> {
  const user = isUuid(userId) ? await findUser(ctx.db, userId.toLowerCase()) : null;
  if (!user) throw errors.notFound('user');
  return userView(user);
}

export async function createUserToken(
  ctx: AppContext,
  userId: string,
  body: { name?: string | null },
  actorUserId: string | null,
): Promise<{ id: string; token: string }> {
  const user = isUuid(userId) ? await findUser(ctx.db, userId.toLowerCase()) : null;
  if (!user) throw errors.notFound('user');
  const token = USER_TOKEN_PREFIX + randomBytes(32).toString('base64url');
  const now = ctx.clock.now();
  const row = await ctx.db.transaction(async (tx) => {
    const t = await insertUserToken(tx, { id: randomUUID(), userId: user.id, name: body.name ?? null, tokenDigest: digest(token), now });
    await appendAudit(tx, { action: 'user.token_created', actorUserId, details: { user_id: user.id, token_id: t.id } }, now);
    return t;
  });
  return { id: row.id, token };
}

/** False when the user has no such token. */
export async function revokeUserToken(ctx: AppContext, userId: string, tokenId: string, actorUserId: string | null): Promise<boolean> {
  if (!isUuid(userId) || !isUuid(tokenId)) return false;
  const now = ctx.clock.now();
  const revoked = await ctx.db.transaction(async (tx) => {
    const gone = await deleteUserToken(tx, userId.toLowerCase(), tokenId.toLowerCase());
    if (gone) await appendAudit(tx, { action: 'user.token_revoked', actorUserId, details: { user_id: userId.toLowerCase(), token_id: tokenId.toLowerCase() } }, now);
    return gone;
  });
  return revoked;
}
