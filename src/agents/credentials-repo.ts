// Reads for credential resolution (spec 4.10, zones.md): a connection as one agent may see it. Writes and the
// row lock live in connections-admin-repo.ts (one function per statement, not duplicated here).
import type { Queryable } from '../storage/db.ts';
import type { ConnectionRow } from './connections-admin-repo.ts';

export type { ConnectionRow } from './connections-admin-repo.ts';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** The agent's active connection with this id; null for an unknown, inactive or foreign one (or a non-uuid). */
export async function findActiveConnectionOfAgent(q: Queryable, agentId: number, connectionId: string): Promise<ConnectionRow | null> {
  if (!UUID.test(connectionId)) return null; // a non-uuid would be a SQL error; it is simply not found
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
