// Run counts and outputs per UTC day, agent and status, for the console's dashboard (issue 14): one aggregate
// statement over the period's runs, served by runs_created_idx (created_at, with agent_id, status and outputs
// included), so a short period reads its own runs only, never the whole table.
import type { Queryable } from '../storage/db.ts';
import { sqlWhere } from '../storage/sql-where.ts';
import type { RunStatus } from './run-states.ts';

export interface RunAggregateRow {
  /** YYYY-MM-DD, the UTC day the runs were created. */
  day: string;
  agent_id: number;
  status: RunStatus;
  runs: number;
  outputs: number;
}

export interface RunAggregateFilter {
  /** Runs created at or after `from` and before `to`. */
  from: Date;
  to: Date;
  agentId?: number;
  /** Only agents of these organizations (a filter, or a caller's scope). */
  orgIds?: string[];
}

export async function aggregateRunsByDay(q: Queryable, f: RunAggregateFilter): Promise<RunAggregateRow[]> {
  const params: unknown[] = [];
  const where = sqlWhere(params, (p) => [
    `created_at >= ${p(f.from)}`,
    `created_at < ${p(f.to)}`,
    f.agentId !== undefined && `agent_id = ${p(f.agentId)}`,
    f.orgIds !== undefined && `agent_id IN (SELECT id FROM agents WHERE org_id = ANY(${p(f.orgIds)}::uuid[]))`,
  ]);
  const { rows } = await q.query<RunAggregateRow>(
    // Grouped on the truncated timestamp (hashed), formatted once per group: formatting every row before grouping
    // made PostgreSQL sort the period's rows on disk (about 2.5 times slower for 86,000 runs).
    `SELECT to_char(d, 'YYYY-MM-DD') AS day, agent_id, status, runs, outputs FROM (
       SELECT date_trunc('day', created_at AT TIME ZONE 'UTC') AS d, agent_id, status,
              count(*)::bigint AS runs, coalesce(sum(outputs), 0)::bigint AS outputs
       FROM runs ${where}
       GROUP BY 1, 2, 3) per_day
     ORDER BY 1, 2, 3`,
    params,
  );
  return rows;
}
