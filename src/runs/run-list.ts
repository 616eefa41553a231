// The admin runs list (GET /api/admin/runs): one query over the runs table, filtered and keyset-paginated.
import type { Queryable } from '../storage/db.ts';
import { sqlWhere } from '../storage/sql-where.ts';
import { RUN_STATUSES, type RunStatus } from './run-states.ts';
import type { RunRow } from './runs-repo.ts';

export interface RunListFilter {
  agentId?: number;
  /** Only runs of these organizations' agents. */
  orgIds?: string[];
  status?: RunStatus;
  source?: string;
  /** Created at or after `createdFrom`, before `createdTo`. */
  createdFrom?: Date;
  createdTo?: Date;
  externalRunId?: string;
  /** The user who started it (runs.created_by). */
  createdBy?: string;
  /** Only runs with a smaller id (the last id of the previous page). */
  beforeId?: number;
  limit: number;
}

/**
 * The admin list: newest first, keyset-paginated on id (ids only grow). Indexes: migrations 0001, 0008, 0010, 0016.
 * One agent's runs of every status are read one status at a time from runs_agent_status_idx, merged by id: there is
 * no (agent_id, id) index any more (migration 0016), and without the split PostgreSQL would read all of the agent's
 * runs, or every run newest first until it found the agent's.
 */
export async function listRuns(q: Queryable, f: RunListFilter): Promise<RunRow[]> {
  const params: unknown[] = [];
  if (f.status !== undefined && !RUN_STATUSES.includes(f.status)) throw new Error(`not a run status: ${f.status}`);
  // The status is written out (a constant of RUN_STATUSES), not a parameter: statements are prepared, and a generic
  // plan for `status = $n` (planned for a common status) read runs_pkey newest first past every run until it found
  // 51 of a rare one (80 ms for `waiting` at ten million runs, issue 15).
  const where = sqlWhere(params, (p) => [
    f.agentId !== undefined && `agent_id = ${p(f.agentId)}`,
    f.orgIds !== undefined && `agent_id IN (SELECT id FROM agents WHERE org_id = ANY(${p(f.orgIds)}::uuid[]))`,
    f.source !== undefined && `source = ${p(f.source)}`,
    f.createdFrom !== undefined && `created_at >= ${p(f.createdFrom)}`,
    f.createdTo !== undefined && `created_at < ${p(f.createdTo)}`,
    f.externalRunId !== undefined && `external_run_id = ${p(f.externalRunId)}`,
    f.createdBy !== undefined && `created_by = ${p(f.createdBy)}::uuid`,
    f.beforeId !== undefined && `id < ${p(f.beforeId)}`,
  ]);
  const limit = `ORDER BY id DESC LIMIT ${Math.trunc(f.limit)}`;
  const ofStatus = (status: RunStatus) => `SELECT * FROM runs ${where ? `${where} AND` : 'WHERE'} status = '${status}' ${limit}`;
  let sql: string;
  if (f.status !== undefined) sql = ofStatus(f.status);
  else if (f.agentId !== undefined) sql = `SELECT * FROM (${RUN_STATUSES.map((st) => `(${ofStatus(st)})`).join(' UNION ALL ')}) r ${limit}`;
  else sql = `SELECT * FROM runs ${where} ${limit}`;
  const { rows } = await q.query<RunRow>(sql, params);
  return rows;
}
