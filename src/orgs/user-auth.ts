// Users reach the platform with a personal token (zones.md): `Authorization: Bearer <token>`, or the session
// cookie `ars_session`. The cookie normally carries a session secret (`ars_sess_…`, made by POST /api/session:
// revocable, with an expiry); a personal token in the cookie is still accepted, as zones.md first described it.
// Only SHA-256 digests are stored, so lookup is by digest (a database equality on 32 random-looking bytes: no
// timing signal to exploit).
import type { AppContext } from '../context.ts';
import { constantTimeEqual, digest } from '../lib/secrets.ts';
import { findUserByTokenDigest } from './users-repo.ts';
import { findLiveSession, membershipsOf } from './sessions-repo.ts';
import { ADMIN_TOKEN_PRINCIPAL, type Principal } from './principal.ts';

export const SESSION_COOKIE = 'ars_session';
/** Session secrets are prefixed like every other secret of the service, so a leaked one is recognizable. */
export const SESSION_SECRET_PREFIX = 'ars_sess_';
const MAX_CREDENTIAL_LENGTH = 512;

/** The presented credential: the bearer token wins; the cookie is read only when there is no Authorization header. */
export function userCredential(authorization: string | undefined, cookieHeader: string | undefined): string | null {
  if (typeof authorization === 'string' && authorization !== '') {
    const match = /^Bearer[ ]+([^\s]+)\s*$/i.exec(authorization);
    return match ? match[1]! : null;
  }
  return sessionCookie(cookieHeader);
}

/** True when the request signs in by the session cookie (no Authorization header): it needs the CSRF check. */
export function signsInByCookie(authorization: string | undefined, cookieHeader: string | undefined): boolean {
  return !(typeof authorization === 'string' && authorization !== '') && sessionCookie(cookieHeader) !== null;
}

export function sessionCookie(cookieHeader: string | undefined): string | null {
  if (!cookieHeader) return null;
  for (const part of cookieHeader.split(';')) {
    const eq = part.indexOf('=');
    if (eq < 0 || part.slice(0, eq).trim() !== SESSION_COOKIE) continue;
    const value = part.slice(eq + 1).trim().replace(/^"(.*)"$/, '$1');
    return value === '' ? null : value;
  }
  return null;
}

/** Who a credential signs in: a session, a personal token, or (for the admin API only) the admin token. */
export interface SignedIn {
  userId: string | null;
  platformAdmin: boolean;
  /** The personal token presented (sign-in ties the new session to it). */
  userTokenId: string | null;
  /** When the credential was a session. */
  session: { id: string; expiresAt: Date } | null;
}

/**
 * `adminToken`: the raw admin token counts (a bearer token of the admin API, sign-in; never a cookie value).
 * `adminSessions`: a session signed in with the admin token counts (the admin API; not the zone proxy, which
 * needs a user to mint a zone JWT for).
 */
export async function signedInBy(
  ctx: AppContext,
  credential: string | null,
  opts: { adminToken: boolean; adminSessions: boolean },
): Promise<SignedIn | null> {
  if (!credential || credential.length > MAX_CREDENTIAL_LENGTH) return null;
  if (opts.adminToken && constantTimeEqual(credential, ctx.adminToken)) {
    return { userId: null, platformAdmin: true, userTokenId: null, session: null };
  }
  if (credential.startsWith(SESSION_SECRET_PREFIX)) {
    const s = await findLiveSession(ctx.db, digest(credential), digest(ctx.adminToken), ctx.clock.now());
    if (!s || (s.user_id === null && !opts.adminSessions)) return null;
    return { userId: s.user_id, platformAdmin: s.platform_admin, userTokenId: null, session: { id: s.session_id, expiresAt: s.expires_at } };
  }
  const user = await findUserByTokenDigest(ctx.db, digest(credential));
  return user && { userId: user.id, platformAdmin: user.platform_admin, userTokenId: user.token_id, session: null };
}

/** A user of the platform (zone proxy): a session or personal token that belongs to a user, not the admin token. */
export async function authenticateUser(ctx: AppContext, credential: string | null): Promise<{ id: string; platform_admin: boolean } | null> {
  const who = await signedInBy(ctx, credential, { adminToken: false, adminSessions: false });
  return who?.userId ? { id: who.userId, platform_admin: who.platformAdmin } : null;
}

/** The admin API's and the console's way in: a bearer token (the admin token too), or the session cookie. */
export async function signedInToAdmin(ctx: AppContext, authorization: string | undefined, cookieHeader: string | undefined): Promise<SignedIn | null> {
  const byCookie = signsInByCookie(authorization, cookieHeader);
  return signedInBy(ctx, userCredential(authorization, cookieHeader), { adminToken: !byCookie, adminSessions: true });
}

/** The principal with its roles: one membership read per request of a user (none for the admin token). */
export async function principalOf(ctx: AppContext, who: SignedIn): Promise<Principal> {
  if (who.userId === null) return ADMIN_TOKEN_PRINCIPAL;
  const memberships = await membershipsOf(ctx.db, who.userId);
  return { userId: who.userId, platformAdmin: who.platformAdmin, roles: new Map(memberships.map((m) => [m.org_id, m.role])) };
}
