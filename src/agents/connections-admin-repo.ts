// Connection writes for the admin API (admin-api.md "Connections"). The type's secret fields are one sealed JSON
// object in secret_enc (ConnectionSecretFields); extras are plain JSON because they are not secret.
import type { Queryable } from '../storage/db.ts';

export type ConnectionType = 'api_key' | 'basic_auth' | 'oauth';

/** What secret_enc holds once opened with ctx.secrets.openJson, by the row's `type`. */
export type ConnectionSecretFields =
  | { value: string } // api_key
  | { username: string; password: string } // basic_auth
  | {
      // oauth
      access_token: string;
      refresh_token?: string | null;
      token_url?: string | null;
      client_id?: string | null;
      client_secret?: string | null;
      scope?: string | null;
    };

export interface ConnectionRow {
  id: string;
  agent_id: number;
  integration_id: string;
  type: ConnectionType;
  secret_enc: string;
  extras: Record<string, unknown>;
  active: boolean;
  token_expires_at: Date | null;
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

export async function listAgentConnections(q: Queryable, agentId: number): Promise<ConnectionRow[]> {
  const { rows } = await q.query<ConnectionRow>('SELECT * FROM connections WHERE agent_id = $1 ORDER BY integration_id, created_at', [
    agentId,
  ]);
  return rows;
}

/** Another active connection of the same agent and integration, if any (a re-activation would collide). */
export async function findActiveSibling(q: Queryable, c: { id: string; agentId: number; integrationId: string }): Promise<string | null> {
  const { rows } = await q.query<{ id: string }>(
    'SELECT id FROM connections WHERE agent_id = $1 AND integration_id = $2 AND active AND id <> $3',
    [c.agentId, c.integrationId, c.id],
  );
  return rows[0]?.id ?? null;
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
