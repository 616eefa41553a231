// The runs table's status-polling claims (decisions.md "Scale-out"): one statement claims due runs with FOR UPDATE
// SKIP LOCKED and pushes their next_poll_at one interval forward, so two instances never poll the same run twice in
// one interval. A short lease (poll_lease_until) also keeps a poll that outlives a short interval from overlapping
// the next. Status-free bookkeeping, like the rest of runs-repo.ts; split from it for size.
import type { Queryable } from '../storage/db.ts';
import type { RunRow } from './runs-repo.ts';

/** What polling needs of a run (a claimed row has it all). */
export type PolledRun = Pick<RunRow, 'id' | 'status' | 'started_at' | 'created_at' | 'external_run_id'>;

export interface DuePoll {
  run: PolledRun;
  runtimeId: number | null;
  target: string | null; // the agent's task or webhook path (run-ownership.ts)
  runningTimeoutMs: number;
  pollIntervalS: number;
}

export async function claimDueForPoll(q: Queryable, now: Date, limit: number, leaseMs: number): Promise<Array<DuePoll & { dueAt: Date }>> {
  const { rows } = await q.query<RunRow & { due_at: Date; a_runtime_id: number | null; a_target: string | null; a_running_timeout_ms: number; a_poll_interval_s: number }>(
    `WITH due AS (
       SELECT r.id, r.next_poll_at AS due_at FROM runs r
       WHERE r.next_poll_at <= $1 AND r.status IN ('queued', 'running', 'waiting') AND r.external_run_id IS NOT NULL
         AND (r.poll_lease_until IS NULL OR r.poll_lease_until <= $1)
       ORDER BY r.next_poll_at
       LIMIT $2
       FOR UPDATE OF r SKIP LOCKED
     )
     UPDATE runs r SET
       next_poll_at = $1::timestamptz + make_interval(secs => a.poll_interval_s),
       poll_lease_until = $1::timestamptz + make_interval(secs => $3::double precision)
     FROM due, agents a
     WHERE r.id = due.id AND a.id = r.agent_id
     RETURNING r.*, due.due_at, a.runtime_id AS a_runtime_id, a.target AS a_target, a.running_timeout_ms AS a_running_timeout_ms, a.poll_interval_s AS a_poll_interval_s`,
    [now, limit, leaseMs / 1000],
  );
  return rows.map(({ due_at, a_runtime_id, a_target, a_running_timeout_ms, a_poll_interval_s, ...run }) => ({
    run: run as RunRow,
    dueAt: due_at, // the next_poll_at it was due at (the claim moved it on): the poll's lag is now − dueAt
    runtimeId: a_runtime_id, target: a_target,
    runningTimeoutMs: Number(a_running_timeout_ms),
    pollIntervalS: Number(a_poll_interval_s),
  }));
}

/** The poll is over: the next one may happen at next_poll_at. */
export async function releasePollLease(q: Queryable, runId: number): Promise<void> {
  await q.query('UPDATE runs SET poll_lease_until = NULL WHERE id = $1', [runId]);
}

/** The runtime asked us to come back later (429 with a reset time): never earlier than already planned. */
export async function deferPoll(q: Queryable, runId: number, notBefore: Date): Promise<void> {
  await q.query(
    `UPDATE runs SET next_poll_at = greatest(next_poll_at, $2::timestamptz), poll_lease_until = NULL
     WHERE id = $1 AND next_poll_at IS NOT NULL`,
    [runId, notBefore],
  );
}
