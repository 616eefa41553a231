// The `connections` table (admin-api.md "Connections"; spec 2.3, 4.4, 4.10): every statement on it, one function
// each. A connection's secret fields are one sealed JSON object in secret_enc (ConnectionSecretFields); extras are
// plain JSON because they are not secret.
import type { Queryable } from '../storage/db.ts';
import { isUuid } from '../lib/uuid.ts';
import type { SealedAt } from '../lib/secrets.ts';
import { sealedAt } from '../storage/sealed-columns.ts';

export type ConnectionType = 'api_key' | 'basic_auth' | 'oauth';

// admin-api.md field names of each type's sealed secret JSON. Type aliases, not interfaces, so the admin service
// can build one from a plain record.
export type ApiKeySecret = {
  value: string;
};

export type BasicAuthSecret = {
  username: string;
  password: string;
};

export type OAuthSecret = {
  access_token: string;
  refresh_token?: string | null;
  token_url?: string | null;
  client_id?: string | null;
  client_secret?: string | null;
  scope?: string | null;
  /** Set by a refresh, from the provider's answer. */
  token_type?: string | null;
  /** RFC 7591 name; default client_secret_post (see decisions). */
  token_endpoint_auth_method?: 'client_secret_post' | 'client_secret_basic';
};

/** What secret_enc holds once opened with ctx.secrets.openJson, by the row's `type`. */
export type ConnectionSecretFields = ApiKeySecret | BasicAuthSecret | OAuthSecret;

/** The place secret_enc of connection `id` is sealed for. */
export const connectionSecretAt = (id: string): SealedAt => sealedAt('connections', 'secret_enc', id);

export interface ConnectionRow {
  id: string;
  agent_id: number;
  integration_id: string;
  type: ConnectionType;
  secret_enc: string;
  extras: Record<string, unknown>;
  active: boolean;
  token_expires_at: Date | null;
  /** Who is refreshing the OAuth token right now (oauth-refresh.ts), and until when that claim holds. */
  refresh_lease: string | null;
  refresh_lease_until: Date | null;
  created_at: Date;
  updated_at: Date;
}

export const ACTIVE_CONNECTION_INDEX = 'connections_active_integration_key';

/** Null when the agent already has an active connection for this integration (the partial unique index). */
export async function insertConnectionOnce(
  q: Queryable,
  c: {
    id: string;
    agentId: number;
    integrationId: string;
    type: ConnectionType;
    secretEnc: string;
    extras: Record<string, unknown>;
    active: boolean;
    tokenExpiresAt: Date | null;
  },
  now: Date,
): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>(
    `INSERT INTO connections (id, agent_id, integration_id, type, secret_enc, extras, active, token_expires_at, created_at, updated_at)
     VALUES ($1, $2, $3, $4, $5, $6::jsonb, $7, $8, $9, $9)
     ON CONFLICT DO NOTHING RETURNING *`,
    [c.id, c.agentId, c.integrationId, c.type, c.secretEnc, JSON.stringify(c.extras), c.active, c.tokenExpiresAt, now],
  );
  return rows[0] ?? null;
}

export async function findConnection(q: Queryable, id: string): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM connections WHERE id = $1', [id]);
  return rows[0] ?? null;
}

export async function lockConnection(q: Queryable, id: string): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM connections WHERE id = $1 FOR UPDATE', [id]);
  return rows[0] ?? null;
}

/**
 * Claims the OAuth refresh of an active connection whose token expires by `refreshBefore`, for `leaseMs` by the
 * database's clock (so instances agree). Null when there is nothing to claim: the token was refreshed meanwhile,
 * the connection is gone or inactive, or another claim has not run out yet.
 */
export async function claimRefresh(q: Queryable, id: string, lease: string, leaseMs: number, refreshBefore: Date): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>(
    `UPDATE connections SET refresh_lease = $2, refresh_lease_until = now() + $3 * interval '1 millisecond'
     WHERE id = $1 AND active AND token_expires_at <= $4 AND (refresh_lease_until IS NULL OR refresh_lease_until < now())
     RETURNING *`,
    [id, lease, leaseMs, refreshBefore],
  );
  return rows[0] ?? null;
}

/**
 * Stores a refreshed token and ends the claim, only while the claim is still ours and the secret is still the one
 * refreshed (an admin's new token meanwhile wins). Null when the write did not apply.
 */
export async function storeRefreshedToken(
  q: Queryable,
  id: string,
  claim: { lease: string; secretEnc: string },
  token: { secretEnc: string; expiresAt: Date | null },
  now: Date,
): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>(
    `UPDATE connections SET secret_enc = $4, token_expires_at = $5, updated_at = $6, refresh_lease = NULL, refresh_lease_until = NULL
     WHERE id = $1 AND active AND refresh_lease = $2 AND secret_enc = $3
     RETURNING *`,
    [id, claim.lease, claim.secretEnc, token.secretEnc, token.expiresAt, now],
  );
  return rows[0] ?? null;
}

/** Ends a claim without a new token (the provider refused), so another caller may try at once. */
export async function releaseRefresh(q: Queryable, id: string, lease: string): Promise<void> {
  await q.query('UPDATE connections SET refresh_lease = NULL, refresh_lease_until = NULL WHERE id = $1 AND refresh_lease = $2', [id, lease]);
}

export async function listAgentConnections(q: Queryable, agentId: number): Promise<ConnectionRow[]> {
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM connections WHERE agent_id = $1 ORDER BY integration_id, created_at', [
    agentId,
  ]);
  return rows;
}

export interface ConnectionPatchColumns {
  secret_enc?: string;
  extras?: Record<string, unknown>;
  active?: boolean;
  token_expires_at?: Date | null;
}

export async function updateConnection(q: Queryable, id: string, patch: ConnectionPatchColumns, now: Date): Promise<ConnectionRow | null> {
  const params: unknown[] = [id, now];
  const sets = ['updated_at = $2'];
  if (patch.secret_enc !== undefined) sets.push(`secret_enc = $${params.push(patch.secret_enc)}`);
  if (patch.extras !== undefined) sets.push(`extras = $${params.push(JSON.stringify(patch.extras))}::jsonb`);
  if (patch.active !== undefined) sets.push(`active = $${params.push(patch.active)}`);
  if (patch.token_expires_at !== undefined) sets.push(`token_expires_at = $${params.push(patch.token_expires_at)}`);
  const { rows } = await q.query<ConnectionRow>(`UPDATE connections SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params);
  return rows[0] ?? null;
}

export async function deleteConnection(q: Queryable, id: string): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>('DELETE FROM connections WHERE id = $1 RETURNING *', [id]);
  return rows[0] ?? null;
}

export type ConnectionIds = Record<string, { integrationId: string; connectionId: string }>;

/** Spec 2.3 / 4.4: the agent's active connections keyed by integration_id; an unconnected integration is absent. */
export async function activeConnectionIds(q: Queryable, agentId: number): Promise<ConnectionIds> {
  const { rows } = await q.query<{ id: string; integration_id: string }>(
    'SELECT id, integration_id FROM connections WHERE agent_id = $1 AND active ORDER BY integration_id',
    [agentId],
  );
  const map: ConnectionIds = Object.create(null);
  for (const r of rows) map[r.integration_id] = { integrationId: r.integration_id, connectionId: r.id };
  return { ...map };
}

/** The agent's active connection with this id; null for an unknown, inactive or foreign one (or a non-uuid). */
export async function findActiveConnectionOfAgent(q: Queryable, agentId: number, connectionId: string): Promise<ConnectionRow | null> {
  if (!isUuid(connectionId)) return null; // a non-uuid would be a SQL error; it is simply not found
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM connections WHERE id = $1 AND agent_id = $2 AND active', [
    connectionId.toLowerCase(),
    agentId,
  ]);
  return rows[0] ?? null;
}

/** The agent's active connection for an integration (at most one: connections_active_integration_key). */
export async function findActiveConnectionByIntegration(q: Queryable, agentId: number, integrationId: string): Promise<ConnectionRow | null> {
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM connections WHERE agent_id = $1 AND integration_id = $2 AND active', [
    agentId,
    integrationId,
  ]);
  return rows[0] ?? null;
}
