// OAuth access-token refresh for credential resolution (spec 4.10, 502 when the provider refuses). One refresh in
// flight per connection, everywhere, and no database connection held while the provider is called:
// - on one instance, concurrent resolves of a connection share one promise (the context's `oauthRefreshes`);
// - across instances, a short statement claims the connection for a lease (claim); the provider is called outside
//   any transaction (call); a conditional UPDATE stores the token and ends the lease (write). An instance that
//   finds the lease taken re-reads the row until the other one has stored its token (or its lease ran out: a
//   crashed claimant blocks nobody for longer than the lease).
// Refresh tokens may rotate: whatever the provider returns replaces the stored one in the same write.
import { randomUUID } from 'node:crypto';
import * as oauth from 'oauth4webapi';
import type { AppContext } from '../context.ts';
import { claimRefresh, connectionSecretAt, findConnection, releaseRefresh, storeRefreshedToken, type ConnectionRow, type OAuthSecret } from '../agents/connections-repo.ts';
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
/** A claim outlives the provider call and the write after it; then another instance may take over. */
export const REFRESH_LEASE_MS = PROVIDER_TIMEOUT_MS + 5_000;
/** How often an instance that found the lease taken looks again. */
const LEASE_RECHECK_MS = 100;

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
  const stored = storedToken(ctx, conn);
  if (!needsRefresh(stored.expiresAt, ctx.clock.now()) || !canRefresh(stored.secret)) return stored;
  return ctx.oauthRefreshes.run(conn.id, () => refreshOnce(ctx, conn.id));
}

/** Claims the refresh, or waits for whoever holds it to store the token (or for their lease to run out). */
async function refreshOnce(ctx: AppContext, connectionId: string): Promise<CurrentToken> {
  const lease = randomUUID();
  const giveUpAt = Date.now() + 2 * REFRESH_LEASE_MS;
  for (;;) {
    const refreshBefore = new Date(ctx.clock.now().getTime() + REFRESH_MARGIN_MS);
    const claimed = await claimRefresh(ctx.db, connectionId, lease, REFRESH_LEASE_MS, refreshBefore);
    if (claimed) return refreshClaimed(ctx, claimed, lease);
    const row = await findConnection(ctx.db, connectionId);
    if (!row || !row.active) throw errors.notFound('connection');
    const stored = storedToken(ctx, row);
    // Another instance refreshed it meanwhile (or nothing is left to refresh).
    if (!needsRefresh(row.token_expires_at, ctx.clock.now()) || !canRefresh(stored.secret)) return stored;
    if (Date.now() > giveUpAt) {
      ctx.log.warn({ connectionId }, 'oauth refresh: another claim kept the connection too long');
      throw upstreamFailed();
    }
    await new Promise((r) => setTimeout(r, LEASE_RECHECK_MS * (0.5 + Math.random())));
  }
}

async function refreshClaimed(ctx: AppContext, row: ConnectionRow, lease: string): Promise<CurrentToken> {
  const connectionId = row.id;
  const current = storedToken(ctx, row);
  if (!canRefresh(current.secret)) {
    await releaseRefresh(ctx.db, connectionId, lease);
    return current;
  }
  let tokens: oauth.TokenEndpointResponse;
  try {
    tokens = await requestRefresh(ctx, connectionId, current.secret);
  } catch (err) {
    // If this fails too, the lease runs out by itself.
    await releaseRefresh(ctx.db, connectionId, lease).catch((e: unknown) => ctx.log.warn({ err: e, connectionId }, 'oauth refresh: could not release the claim'));
    throw err;
  }
  const now = ctx.clock.now();
  const next: OAuthSecret = {
    ...current.secret,
    access_token: tokens.access_token,
    refresh_token: tokens.refresh_token ?? current.secret.refresh_token, // rotated if the provider sent a new one
    scope: tokens.scope ?? current.secret.scope,
    token_type: tokens.token_type,
  };
  const expiresAt = typeof tokens.expires_in === 'number' ? new Date(now.getTime() + tokens.expires_in * 1000) : null;
  const written = await storeRefreshedToken(ctx.db, connectionId, { lease, secretEnc: row.secret_enc }, { secretEnc: ctx.secrets.sealJson(next, connectionSecretAt(connectionId)), expiresAt }, now);
  if (!written) {
    // Changed under the claim (an admin's new token, a deactivation) or the lease ran out and another instance
    // took over: what is stored now wins, unless it is itself a token due for refresh.
    const latest = await findConnection(ctx.db, connectionId);
    if (!latest || !latest.active) throw errors.notFound('connection');
    ctx.log.warn({ connectionId }, 'oauth refresh: the connection changed during the refresh; the new token was not stored');
    const stored = storedToken(ctx, latest);
    return needsRefresh(stored.expiresAt, ctx.clock.now()) ? { secret: next, expiresAt } : stored;
  }
  ctx.log.info({ connectionId, rotatedRefreshToken: tokens.refresh_token !== undefined }, 'oauth access token refreshed');
  return { secret: next, expiresAt };
}

function storedToken(ctx: AppContext, row: ConnectionRow): CurrentToken {
  return { secret: ctx.secrets.openJson<OAuthSecret>(row.secret_enc, connectionSecretAt(row.id)), expiresAt: row.token_expires_at };
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
