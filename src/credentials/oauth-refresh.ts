// OAuth access-token refresh for credential resolution (spec 4.10, 502 when the provider refuses). One refresh in
// flight per connection, everywhere:
// - on one instance, concurrent resolves of a connection share one promise (the context's `oauthRefreshes`);
// - across instances, the refresh runs holding the connection's row lock (SELECT … FOR UPDATE) and re-reads the
//   row under it, so an instance that waited finds the token another one just stored and uses it.
// On PGlite there is only ever one instance, and a PGlite transaction holds its only connection (every other query
// would stall behind the provider call), so there the single-flight map alone is the lock.
// Refresh tokens may rotate: whatever the provider returns replaces the stored one in the same write.
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../context.ts';
import type { Db, Queryable } from '../storage/db.ts';
import { findConnection, lockConnection, updateConnection, type ConnectionRow, type OAuthSecret } from '../agents/connections-repo.ts';
import type { OutboundClient } from '../lib/safe-http.ts';
import type { SingleFlight } from '../lib/single-flight.ts';
import { ApiError, errors } from '../errors.ts';

export interface CurrentToken {
  secret: OAuthSecret;
  expiresAt: Date | null;
}

/** Refresh when the token is expired or expires within this margin, so the task never gets a dying token. */
export const REFRESH_MARGIN_MS = 60_000;
/** The whole provider call, connect to last byte. */
const PROVIDER_TIMEOUT_MS = 10_000;

export function needsRefresh(expiresAt: Date | null, now: Date): boolean {
  return expiresAt !== null && new Date(expiresAt).getTime() - now.getTime() <= REFRESH_MARGIN_MS;
}

export function canRefresh(secret: OAuthSecret): boolean {
  return nonEmpty(secret.refresh_token) && nonEmpty(secret.token_url) && nonEmpty(secret.client_id);
}

/** The context's OAuth single-flight: one refresh in flight per connection id on this instance. */
export type OAuthRefreshes = SingleFlight<string, CurrentToken>;

/**
 * The connection's OAuth token, refreshed first when it is (nearly) expired and refreshable. Throws 502
 * upstream_failed when the provider refuses, 404 when the connection vanished or was deactivated meanwhile.
 */
export async function currentOAuthToken(ctx: AppContext, conn: ConnectionRow): Promise<CurrentToken> {
  const secret = ctx.secrets.openJson<OAuthSecret>(conn.secret_enc);
  if (!needsRefresh(conn.token_expires_at, ctx.clock.now()) || !canRefresh(secret)) {
    return { secret, expiresAt: conn.token_expires_at };
  }
  return ctx.oauthRefreshes.run(conn.id, () => refreshUnderLock(ctx, conn.id));
}

async function refreshUnderLock(ctx: AppContext, connectionId: string): Promise<CurrentToken> {
  return withConnectionLock(ctx.db, connectionId, async (q, row) => {
    if (!row || !row.active) throw errors.notFound('connection');
    const current = ctx.secrets.openJson<OAuthSecret>(row.secret_enc);
    // Another instance may have refreshed while we waited for the lock.
    if (!needsRefresh(row.token_expires_at, ctx.clock.now()) || !canRefresh(current)) {
      return { secret: current, expiresAt: row.token_expires_at };
    }
    const tokens = await requestRefresh(ctx, connectionId, current);
    const now = ctx.clock.now();
    const next: OAuthSecret = {
      ...current,
      access_token: tokens.access_token,
      refresh_token: tokens.refresh_token ?? current.refresh_token, // rotated if the provider sent a new one
      scope: tokens.scope ?? current.scope,
      token_type: tokens.token_type,
    };
    const expiresAt = typeof tokens.expires_in === 'number' ? new Date(now.getTime() + tokens.expires_in * 1000) : null;
    await updateConnection(q, connectionId, { secret_enc: ctx.secrets.sealJson(next), token_expires_at: expiresAt }, now);
    ctx.log.info({ connectionId, rotatedRefreshToken: tokens.refresh_token !== undefined }, 'oauth access token refreshed');
    return { secret: next, expiresAt };
  });
}

async function withConnectionLock<T>(db: Db, connectionId: string, fn: (q: Queryable, row: ConnectionRow | null) => Promise<T>): Promise<T> {
  if (db.driver === 'pglite') return fn(db, await findConnection(db, connectionId));
  return db.transaction(async (tx) => fn(tx, await lockConnection(tx, connectionId)));
}

/** One refresh_token grant (RFC 6749 §6) through oauth4webapi. Every failure is a 502 without provider detail. */
async function requestRefresh(ctx: AppContext, connectionId: string, secret: OAuthSecret): Promise<oauth.TokenEndpointResponse> {
  const tokenUrl = usableTokenUrl(secret.token_url!, ctx.outbound);
  if (!tokenUrl) {
    ctx.log.warn({ connectionId }, 'oauth refresh skipped: token_url must be https (http only for ARS_OUTBOUND_ALLOW_HOSTS)');
    throw upstreamFailed();
  }
  const as: oauth.AuthorizationServer = { issuer: tokenUrl.origin, token_endpoint: tokenUrl.href };
  const client: oauth.Client = { client_id: secret.client_id! };
  const auth = !nonEmpty(secret.client_secret)
    ? oauth.None()
    : secret.token_endpoint_auth_method === 'client_secret_basic'
      ? oauth.ClientSecretBasic(secret.client_secret)
      : oauth.ClientSecretPost(secret.client_secret);
  try {
    const response = await oauth.refreshTokenGrantRequest(as, client, auth, secret.refresh_token!, {
      signal: AbortSignal.timeout(PROVIDER_TIMEOUT_MS),
      [oauth.allowInsecureRequests]: tokenUrl.protocol === 'http:',
      [oauth.customFetch]: (url, init) => fetchIgnoringIdToken(ctx.outbound, url, init),
    });
    return await oauth.processRefreshTokenResponse(as, client, response);
  } catch (err) {
    // Only non-secret facts are logged: the HTTP status and the OAuth error code, never a body or a token.
    const e = err as { status?: unknown; error?: unknown; name?: unknown; code?: unknown };
    ctx.log.warn(
      {
        connectionId,
        status: typeof e.status === 'number' ? e.status : undefined,
        oauthError: typeof e.error === 'string' && /^[\w.-]{1,64}$/.test(e.error) ? e.error : undefined,
        kind: typeof e.code === 'string' ? e.code : typeof e.name === 'string' ? e.name : 'error',
      },
      'oauth refresh refused',
    );
    throw upstreamFailed();
  }
}

function upstreamFailed(): ApiError {
  return new ApiError('upstream_failed', 'the OAuth provider refused to refresh the access token');
}

/**
 * We never use ID tokens; an OIDC provider that adds one to a refresh answer would otherwise make oauth4webapi
 * validate it against an issuer we never discovered (e.g. Google's token endpoint is not its issuer).
 */
async function fetchIgnoringIdToken(
  client: OutboundClient,
  url: string,
  init: oauth.CustomFetchOptions<'POST', URLSearchParams>,
): Promise<Response> {
  const res = await client.fetch(url, init);
  if (!res.ok || !(res.headers.get('content-type') ?? '').includes('json')) return res;
  const text = await res.text();
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    body = null;
  }
  const headers = new Headers(res.headers);
  headers.delete('content-length');
  if (body && typeof body === 'object' && 'id_token' in body) {
    delete (body as Record<string, unknown>).id_token;
    return new Response(JSON.stringify(body), { status: res.status, statusText: res.statusText, headers });
  }
  return new Response(text, { status: res.status, statusText: res.statusText, headers });
}

/**
 * https always; plain http only to a host the operator listed in ARS_OUTBOUND_ALLOW_HOSTS (a local provider). The
 * guarded client decides which addresses may be reached; this rule keeps client secrets and refresh tokens, which
 * go to public hosts too, off cleartext.
 */
export function usableTokenUrl(raw: string, client: Pick<OutboundClient, 'isAllowListed'>): URL | null {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol === 'https:') return url;
  return url.protocol === 'http:' && client.isAllowListed(url.hostname) ? url : null;
}

function nonEmpty(v: unknown): v is string {
  return typeof v === 'string' && v !== '';
}
