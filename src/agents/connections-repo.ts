import type { Queryable } from '../storage/db.ts';

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
