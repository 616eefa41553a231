// Run retention, opt-in (issue 39 item 4; decisions.md "Data lifecycle"): terminal runs that finished before a
// cutoff are deleted with everything that names them, a batch per transaction. Each batch also adds the runs it
// deletes to run_day_deleted (their day, agent, status and outputs), in the same statement, so the dashboard's
// figures never see a run missing that the rollup counted (run-rollup.ts).
import type { Db } from '../storage/db.ts';
import { TERMINAL_STATUSES } from '../schemas/run-status.ts';
import { COLUMNS, COUNTS, rollupState } from './run-rollup.ts';

const TERMINAL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');

export interface DeletedRuns {
  runs: number;
  /** Rows that named those runs: timeline entries, outbox rows, Idempotency-Keys; replays that named them as replay_of keep their own run. */
  children: number;
}

/**
 * Deletes up to `limit` terminal runs that finished before `cutoff`, oldest first. Only runs the dashboard's rollup
 * already holds as they are (created on a closed day, unchanged since its last refresh): deleting one it has not
 * seen would leave the rollup counting it as it was. Nothing is deleted before the rollup's first build.
 */
export async function deleteFinishedRunsBefore(db: Db, cutoff: Date, limit: number): Promise<DeletedRuns> {
  return db.transaction(async (tx) => {
    const state = await rollupState(tx);
    if (!state) return { runs: 0, children: 0 };
    // runs_created_idx, oldest first: every finished run was created before it finished.
    const { rows } = await tx.query<{ id: string }>(
      `SELECT id FROM runs
       WHERE created_at < $1 AND created_at < $2 AND status IN (${TERMINAL})
         AND coalesce(completed_at, updated_at) < $1 AND updated_at <= $3
       ORDER BY created_at LIMIT $4 FOR UPDATE SKIP LOCKED`,
      [cutoff, state.closedBefore, state.freshThrough, limit],
    );
    if (rows.length === 0) return { runs: 0, children: 0 };
    const ids = rows.map((r) => r.id);
    let children = 0;
    for (const sql of [
      'DELETE FROM run_transitions WHERE run_id = ANY($1::bigint[])',
      'DELETE FROM outbox WHERE run_id = ANY($1::bigint[])',
      'DELETE FROM idempotency_keys WHERE run_id = ANY($1::bigint[])',
    ]) children += (await tx.query(sql, [ids])).rowCount;
    // A replay is a run of its own: it stays, no longer naming a run that is gone (its updated_at is left alone:
    // nothing the dashboard or the live feed shows changed).
    // IS NOT NULL lets the planner use the partial runs_replay_of_idx for the array (without it: every run, read).
    await tx.query('UPDATE runs SET replay_of = NULL WHERE replay_of IS NOT NULL AND replay_of = ANY($1::bigint[])', [ids]);
    const added = COLUMNS.split(', ').map((c) => `${c} = run_day_deleted.${c} + EXCLUDED.${c}`).join(', ');
    const { rows: gone } = await tx.query<{ n: number }>(
      `WITH gone AS (DELETE FROM runs WHERE id = ANY($1::bigint[]) RETURNING created_at, agent_id, status, outputs),
       counted AS (
         INSERT INTO run_day_deleted (day, agent_id, ${COLUMNS}, outputs)
         SELECT (created_at AT TIME ZONE 'UTC')::date, agent_id, ${COUNTS}, coalesce(sum(outputs), 0)::bigint
         FROM gone GROUP BY 1, 2
         ON CONFLICT (day, agent_id) DO UPDATE SET ${added}, outputs = run_day_deleted.outputs + EXCLUDED.outputs
       )
       SELECT count(*)::int AS n FROM gone`,
      [ids],
    );
    return { runs: gone[0]!.n, children };
  });
}
