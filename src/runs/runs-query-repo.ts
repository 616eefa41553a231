// Read side of runs for the admin API: newest first, keyset-paginated on id (ids only grow).
import type { Queryable } from '../storage/db.ts';
import type { RunRow } from './runs-repo.ts';
import type { RunStatus } from './run-states.ts';

export interface RunListFilter {
  agentId?: number;
  status?: RunStatus;
  /** Only runs with a smaller id (the last id of the previous page). */
  beforeId?: number;
  limit: number;
}

export async function listRuns(q: Queryable, f: RunListFilter): Promise<RunRow[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (f.agentId !== undefined) where.push(`agent_id = $${params.push(f.agentId)}`);
  if (f.status !== undefined) where.push(`status = $${params.push(f.status)}`);
  if (f.beforeId !== undefined) where.push(`id < $${params.push(f.beforeId)}`);
  const sql = `SELECT * FROM runs ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.push(f.limit)}`;
  const { rows } = await q.query<RunRow>(sql, params);
  return rows;
}
