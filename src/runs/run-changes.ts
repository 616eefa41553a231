// Run status changes in the order they were written (runs_updated_idx), for the console's live feed
// (admin/run-feed.ts) and a stream's replay after a reconnect (routes/admin/run-events.ts).
import type { Queryable } from '../storage/db.ts';
import type { RunStatus } from './run-states.ts';

/** One run's status as of `updated_at`; ids as the admin run view gives them. */
export interface RunChange {
  runId: number;
  agentId: number;
  orgId: string;
  status: RunStatus;
  updated_at: string;
}

interface Row {
  id: number;
  agent_id: number;
  org_id: string;
  status: RunStatus;
  updated_at: Date;
}

/** The runs changed after (`since`, `afterId`), oldest first; `orgIds` null: every organization. */
export async function runsChangedSince(q: Queryable, since: Date, limit: number, orgIds: string[] | null, afterId = 0): Promise<RunChange[]> {
  const params: unknown[] = [since, afterId, limit];
  const orgFilter = orgIds === null ? '' : ` AND a.org_id = ANY($${params.push(orgIds)}::uuid[])`;
  const { rows } = await q.query<Row>(
    `SELECT r.id, r.agent_id, a.org_id, r.status, r.updated_at
     FROM runs r JOIN agents a ON a.id = r.agent_id
     WHERE (r.updated_at, r.id) > ($1::timestamptz, $2::bigint)${orgFilter}
     ORDER BY r.updated_at, r.id LIMIT $3`,
    params,
  );
  return rows.map((r) => ({ runId: Number(r.id), agentId: Number(r.agent_id), orgId: r.org_id, status: r.status, updated_at: new Date(r.updated_at).toISOString() }));
}

/** The newest change's position (the epoch when there is no run). */
export async function newestRunChange(q: Queryable): Promise<{ at: Date; id: number }> {
  const { rows } = await q.query<{ at: Date; id: number }>('SELECT updated_at AS at, id FROM runs ORDER BY updated_at DESC, id DESC LIMIT 1');
  return rows[0] ? { at: new Date(rows[0].at), id: Number(rows[0].id) } : { at: new Date(0), id: 0 };
}
