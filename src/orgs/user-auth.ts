// Users reach the platform with a personal token (zones.md): `Authorization: Bearer <token>`, or the session
// cookie `ars_session=<token>` that the UI sets after sign-in with that same token. Only the SHA-256 digest is
// stored, so lookup is by digest (a database equality on 32 random-looking bytes: no timing signal to exploit).
import type { AppContext } from '../context.ts';
import { digest } from '../lib/secrets.ts';
import { findUserByTokenDigest, type TokenUser } from './users-repo.ts';

export const SESSION_COOKIE = 'ars_session';

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

export async function authenticateUser(ctx: AppContext, credential: string | null): Promise<TokenUser | null> {
  if (!credential || credential.length > 512) return null;
  return findUserByTokenDigest(ctx.db, digest(credential));
}
