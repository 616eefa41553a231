// Spec part 3's two timeouts as set-based terminal writes, beside the one-run transitions of run-transitions.ts:
// the sweeper (background/timeout-sweeper.ts) fails every queued or running run past its timeout in batches, each
// batch one statement that also announces the moves as `transition` does (run-announcements.ts).
import type { Db } from '../storage/db.ts';
import { allowedFrom } from './run-states.ts';
import type { RunRow } from './runs-repo.ts';
import { announced } from './run-announcements.ts';

/** How many runs one timeout statement fails at most; the sweeper repeats until a batch comes back short. */
export const TIMEOUT_BATCH = 500;

/**
 * Spec part 3 "queued → failed, 10 minutes since creation" as one set-based guarded UPDATE. Rows locked by another
 * instance are skipped, not waited for. The status is written out, not a parameter, so that the planner reads
 * runs_active_created_idx (runs in flight, by created_at) in the pick's order: with `status = ANY($2)` and
 * statistics that make queued runs look common, it could read runs_created_idx from the first run ever created
 * instead, through every finished run (issue 15: past the statement timeout at ten million runs).
 */
export async function failQueuedTimedOut(db: Db, now: Date, queuedTimeoutMs: number, reason: string): Promise<RunRow[]> {
  const from = allowedFrom('terminal', 'failed').filter((s) => s === 'queued');
  if (from.join() !== 'queued') throw new Error('the state machine no longer fails queued runs by timeout');
  return failSetBased(
    db,
    `SELECT id FROM runs WHERE status = 'queued' AND created_at < $1::timestamptz - make_interval(secs => $4::double precision)
     ORDER BY created_at LIMIT ${TIMEOUT_BATCH} FOR UPDATE SKIP LOCKED`,
    [now, from, JSON.stringify(reason), queuedTimeoutMs / 1000],
  );
}

/**
 * Spec part 3 "running → failed, running timeout exceeded, measured from started_at" (rule 2: queued time never
 * counts). Only `running`: a `waiting` run is failed by the poll after it resumes (rule 3), not here.
 *
 * Each agent has its own timeout, so the exact test needs the join; the shortest timeout of any agent bounds it
 * from above, which lets the scan read runs_running_started_idx (migration 0011) only up to that bound instead of
 * every running run (issue 15: at scale those reads were scattered over the whole heap). The status is written
 * out, not a parameter, so that the planner can match the partial index.
 */
export async function failRunningTimedOut(db: Db, now: Date, reason: string): Promise<RunRow[]> {
  const from = allowedFrom('terminal', 'failed').filter((s) => s === 'running');
  if (from.join() !== 'running') throw new Error('the state machine no longer fails running runs by timeout');
  return failSetBased(
    db,
    `SELECT r.id FROM runs r JOIN agents a ON a.id = r.agent_id
     WHERE r.status = 'running' AND r.started_at IS NOT NULL
       AND r.started_at < $1::timestamptz - make_interval(secs => (SELECT min(running_timeout_ms) FROM agents) / 1000.0)
       AND r.started_at < $1::timestamptz - make_interval(secs => a.running_timeout_ms / 1000.0)
     ORDER BY r.started_at LIMIT ${TIMEOUT_BATCH} FOR UPDATE OF r SKIP LOCKED`,
    [now, from, JSON.stringify(reason)],
  );
}

/**
 * Fails the runs `pick` selects ($1 now, $2 allowed statuses, $3 error JSON): a terminal write stamping
 * completed_at and the wall-clock duration, re-checking the status guard on the row it locks, announced as
 * `transition` announces. The guard is written so that no index can serve it (array_position, not `= ANY`): it
 * re-checks the picked rows, found by primary key. Written as `status = ANY($2)`, it let the planner drive the
 * UPDATE from a scan of every running run (runs_running_started_idx, whose predicate it matches) when statistics
 * said there were few, and join the 500 picked ids to each (issue 15: 1.5 s a statement at one million runs).
 *
 * The pick runs with bitmap scans off, so it reads its partial index in order and stops at the batch. Each run
 * that leaves `running` or `queued` leaves a dead entry in the in-flight indexes, and at scale no vacuum removes
 * them (PostgreSQL skips index vacuuming while under 2% of a table's pages hold dead items). An ordered index scan
 * marks the dead entries it passes, so later picks skip them; a bitmap scan neither skips nor marks them. When the
 * statistics count few runs in flight, which is normal, the planner prefers a bitmap AND of runs_status_idx and
 * runs_active_created_idx and a sort, and then every pick reads every dead entry again (issue 15, ten million runs,
 * about 47,000 dead entries for 2,000 live: 13–15 ms a pick and growing with every pass, against 1.4 ms in order).
 */
async function failSetBased(db: Db, pick: string, params: unknown[]): Promise<RunRow[]> {
  const events = announced('moved', '$1', "'timeout'");
  const { rows } = await db.transaction(async (tx) => {
    await tx.exec('SET LOCAL enable_bitmapscan = off');
    return tx.query<RunRow & { notified?: unknown }>(
      `WITH picked AS (${pick}),
       moved AS (
         UPDATE runs SET status = 'failed', updated_at = $1, error = $3::jsonb, completed_at = $1,
           duration_ms = greatest(0, round(extract(epoch from ($1::timestamptz - coalesce(started_at, created_at))) * 1000))::bigint,
           next_poll_at = NULL, wait_state = NULL
         FROM picked WHERE runs.id = picked.id AND array_position($2::text[], runs.status) IS NOT NULL
         RETURNING runs.*
       ), ${events.cte}
       SELECT moved.*, ${events.notify} FROM moved`,
      params,
    );
  });
  for (const row of rows) delete row.notified;
  return rows;
}
