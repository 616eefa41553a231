// Console sign-in (issue 14): a token buys a session; the cookie carries the session's own random secret.
import { randomBytes, randomUUID } from 'node:crypto';
import type { AppContext } from '../context.ts';
import { digest } from '../lib/secrets.ts';
import { findUser } from './users-repo.ts';
import { deleteExpiredSessions, deleteSession, insertSession, membershipsOf, type OrgRole } from './sessions-repo.ts';
import { SESSION_SECRET_PREFIX, signedInBy, type SignedIn } from './user-auth.ts';

export interface SessionView {
  user: { id: string | null; email: string | null; name: string | null; platform_admin: boolean };
  memberships: Array<{ org_id: string; org_name: string; role: OrgRole }>;
  /** Null when the request was signed in by a bearer token rather than a session. */
  expires_at: string | null;
}

/**
 * Sign-in with the admin token or a personal token (never with another session's secret). Null: not a token
 * anyone holds. Each sign-in also clears a batch of expired sessions, so the table does not grow without bound.
 */
export async function signIn(ctx: AppContext, token: string, ttlMs: number): Promise<{ secret: string; view: SessionView } | null> {
  if (token.startsWith(SESSION_SECRET_PREFIX)) return null;
  const who = await signedInBy(ctx, token, { adminToken: true, adminSessions: false });
  if (!who) return null;
  const now = ctx.clock.now();
  const expiresAt = new Date(now.getTime() + ttlMs);
  const secret = SESSION_SECRET_PREFIX + randomBytes(32).toString('base64url');
  await deleteExpiredSessions(ctx.db, now);
  await insertSession(ctx.db, {
    id: randomUUID(),
    secretDigest: digest(secret),
    userId: who.userId,
    userTokenId: who.userTokenId,
    adminTokenDigest: who.userId === null ? digest(ctx.adminToken) : null,
    now,
    expiresAt,
  });
  return { secret, view: await sessionView(ctx, { ...who, session: { id: '', expiresAt } }) };
}

export async function signOut(ctx: AppContext, secret: string): Promise<void> {
  await deleteSession(ctx.db, digest(secret));
}

/** What the console shows of whoever is signed in: the user, their organizations and when the session ends. */
export async function sessionView(ctx: AppContext, who: SignedIn): Promise<SessionView> {
  const expires_at = who.session ? who.session.expiresAt.toISOString() : null;
  if (who.userId === null) return { user: { id: null, email: null, name: null, platform_admin: true }, memberships: [], expires_at };
  const [user, memberships] = await Promise.all([findUser(ctx.db, who.userId), membershipsOf(ctx.db, who.userId)]);
  return {
    user: { id: who.userId, email: user?.email ?? null, name: user?.name ?? null, platform_admin: who.platformAdmin },
    memberships,
    expires_at,
  };
}
