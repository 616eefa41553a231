// Every write of `runs.status` (house style 9), as SQL. Each transition is one guarded UPDATE whose allowed "from"
// statuses come from the state machine (run-states.ts); the same statement queues the outbound events of the new
// status in the outbox, records it on the run's timeline with the path that wrote it, and NOTIFYs waiters
// (`announced`, run-announcements.ts), so a transition, its events, its timeline entry and its wake-up are atomic.
import type { Db, Queryable } from '../storage/db.ts';
import { fixedWrite, writeGuarded, type OverLimit, type RateGuard } from '../rate-limits/rate-guard.ts';
import type { TransitionPath } from '../metrics/metrics.ts';
import { allowedFrom, classifyRefusal, type RunEvent, type RunStatus } from './run-states.ts';
import { findRun, jsonParam, withExternalRunId, type RunRow, type WaitState } from './runs-repo.ts';
import { announced } from './run-announcements.ts';

/** Fields a transition may write besides status. `undefined` leaves a column as it is. */
export interface RunPatch {
  outputData?: unknown;
  outputs?: number | null; // null/undefined: keep (spec 4.8: the latest non-null value wins)
  error?: unknown;
  durationMs?: number | null; // terminal only; absent: wall clock from started_at (or created_at)
  startedAt?: Date | null; // stamped once: coalesce keeps the first
  completedAt?: Date | null; // terminal only; absent: now
  externalRunId?: string | null; // kept if already set; one the table cannot take is left out (never fails the write)
  waitState?: WaitState | null; // null clears
  metadata?: unknown;
  nextPollAt?: Date | null;
}

export type TransitionResult =
  | { kind: 'applied'; run: RunRow }
  | { kind: 'noop'; run: RunRow } // already there (spec part 1: later terminal writes are no-ops)
  | { kind: 'backward'; run: RunRow } // spec part 3 rule 1: 409
  | { kind: 'not_found' };

/**
 * Moves run `runId` to `to` on `event`, if and only if its current status allows it — in one statement.
 * Terminal moves stamp completed_at and duration; every move stamps started_at once when the run is past queued.
 * With `agentId`, a run of another agent is not found.
 */
export function transition(
  q: Queryable,
  runId: number,
  event: RunEvent,
  to: RunStatus,
  now: Date,
  patch: RunPatch,
  opts: { via: TransitionPath; agentId?: number },
): Promise<TransitionResult> {
  // Without a guard nothing can be over a limit.
  return countedTransition(q, null, { runId, event, to, now, patch, agentId: opts.agentId, via: opts.via }) as Promise<TransitionResult>;
}

/** `transition` that also counts the request against its rate limit (rate-guard.ts); over it, nothing is written. */
export async function countedTransition(
  q: Queryable,
  guard: RateGuard | null,
  t: { runId: number; event: RunEvent; to: RunStatus; now: Date; patch: RunPatch; agentId?: number; via: TransitionPath },
): Promise<TransitionResult | OverLimit> {
  // The run's new status and result matter more than the runtime's id: an id the table cannot take is dropped.
  const moved = await withExternalRunId(t.patch.externalRunId, (externalRunId) =>
    writeGuarded<RunRow & { notified?: unknown; prior_status?: unknown }>(q, guard, transitionStatement(t, { ...t.patch, externalRunId })),
  );
  if (moved && 'kind' in moved) return moved;
  if (moved) {
    delete moved.notified;
    delete moved.prior_status;
    return { kind: 'applied', run: moved };
  }
  const current = await findRun(q, t.runId);
  if (!current || (t.agentId !== undefined && current.agent_id !== t.agentId)) return { kind: 'not_found' };
  return { kind: classifyRefusal(t.event, current.status, t.to), run: current };
}

function transitionStatement(
  { runId, event, to, now, agentId, via }: { runId: number; event: RunEvent; to: RunStatus; now: Date; agentId?: number; via: TransitionPath },
  patch: RunPatch,
) {
  const terminal = to === 'completed' || to === 'failed' || to === 'cancelled';
  const from = allowedFrom(event, to);
  const params: unknown[] = [runId, from, to, now];
  const p = placeholderFor(params);
  const sets = ['status = $3', 'updated_at = $4'];

  if (to !== 'queued') sets.push(`started_at = coalesce(started_at, ${p(patch.startedAt ?? null)}::timestamptz, $4)`);
  if (patch.outputData !== undefined) sets.push(`output_data = ${p(jsonParam(patch.outputData))}::jsonb`);
  if (patch.outputs !== undefined && patch.outputs !== null) sets.push(`outputs = ${p(patch.outputs)}`);
  if (patch.error !== undefined) sets.push(`error = ${p(jsonParam(patch.error))}::jsonb`);
  if (patch.externalRunId) sets.push(`external_run_id = coalesce(external_run_id, ${p(patch.externalRunId)})`);
  if (patch.metadata !== undefined) sets.push(`metadata = ${p(jsonParam(patch.metadata))}::jsonb`);
  if (patch.waitState !== undefined) sets.push(`wait_state = ${p(jsonParam(patch.waitState))}::jsonb`);
  if (terminal) {
    const completedAt = p(patch.completedAt ?? null);
    sets.push(`completed_at = coalesce(${completedAt}::timestamptz, $4)`);
    // Wall clock from the first start (or creation, for a run that never started) unless supplied.
    sets.push(
      `duration_ms = coalesce(${p(patch.durationMs ?? null)}::bigint,
         greatest(0, round(extract(epoch from (coalesce(${completedAt}::timestamptz, $4)
           - coalesce(started_at, ${p(patch.startedAt ?? null)}::timestamptz, created_at))) * 1000))::bigint)`,
    );
    sets.push('next_poll_at = NULL');
    if (patch.waitState === undefined) sets.push('wait_state = NULL');
  } else if (patch.nextPollAt !== undefined) {
    sets.push(`next_poll_at = ${p(patch.nextPollAt)}`);
  }
  // Only a change of status goes on the timeline (an ingest report of the same status is not one); a new `waiting`
  // (another wait) always is. So only an event that may leave a run in its target status other than `waiting` (ingest:
  // "same status updates the record") reads the status it replaces: `prior`, locked so that the read waits for, and
  // sees, a concurrent writer's commit, as the UPDATE itself does. Every other write is a timeline entry whenever it
  // applies, and goes without that lock read (issue 15).
  const readsPrior = to !== 'waiting' && from.includes(to);
  const where = `id = $1${readsPrior ? ' AND id = prior_id' : ''} AND status = ANY($2::text[])${agentId === undefined ? '' : ` AND agent_id = ${p(agentId)}`}`;
  const events = announced('moved', '$4', p(via), readsPrior ? 'moved.prior_status <> moved.status' : 'true');
  return {
    params,
    ctes: (withinLimit: string | null) =>
      `moved AS (UPDATE runs SET ${sets.join(', ')}${readsPrior ? ` FROM (${PRIOR_STATUS}) prior` : ''}
         WHERE ${where}${withinLimit ? ` AND ${withinLimit}` : ''} RETURNING runs.*${readsPrior ? ', prior.prior_status' : ''}
       ), ${events.cte}`,
    from: 'moved',
    select: `moved.*, ${events.notify}`,
  };
}

/** The run's status before the statement's UPDATE ($1 is the run id), locked (see transitionStatement). */
const PRIOR_STATUS = 'SELECT id AS prior_id, status AS prior_status FROM runs WHERE id = $1 FOR UPDATE';

/**
 * The run ($1) if it is still queued, locked: the intermediate output's lift. Locking makes the read wait for, and
 * re-check against, a concurrent writer's commit, so of two reports racing on a queued run only the one that
 * lifts it sees `queued` (one timeline entry). A run that reads as running (or anything else) is not locked and
 * this is empty: no status can move back to queued, so there is no lift to miss.
 */
const QUEUED_STATUS = "SELECT status AS prior_status FROM runs WHERE id = $1 AND status = 'queued' FOR UPDATE";

/**
 * recordIntermediateOutput's two statements ($1 run, $2 allowed statuses, $3 now, $4 output, $5 outputs, $6 the
 * agent when `ofAgent`). `reported`, tried first: the common case, a report on a run that has started (running,
 * waiting), which writes the output and nothing else, and counts the request (spec 8.1) when there is a guard.
 * `lifting`, when `reported` found no started run: a report on a queued run lifts it to running, a status change
 * that goes on the timeline; only a run that reads as queued is locked first (`lift`, QUEUED_STATUS). It takes every
 * active status, so a run lifted by a concurrent report in between is still written. Two statements rather than
 * one that does both: the lift's lock read and the timeline's INSERT cost the server about 12 µs on every report,
 * nearly all of which are on running runs (issue 15; decisions.md "Intermediate output"). A queued run's first
 * report pays one more round trip instead.
 */
const outputWrite = (ofAgent: boolean, lifting: boolean) =>
  fixedWrite(ofAgent ? 6 : 5, {
    ctes: (withinLimit) => {
      const where = `WHERE id = $1 AND status = ANY($2::text[])${ofAgent ? ' AND agent_id = $6' : ''}${withinLimit ? ` AND ${withinLimit}` : ''}`;
      const sets = `started_at = coalesce(started_at, $3), output_data = coalesce($4::jsonb, output_data), outputs = coalesce($5::bigint, outputs), updated_at = $3`;
      if (!lifting) return `moved AS (UPDATE runs SET ${sets} ${where} RETURNING id, status)`;
      return `moved AS (
         UPDATE runs SET status = CASE WHEN status = 'queued' THEN 'running' ELSE status END, ${sets}
         FROM (SELECT 1) one LEFT JOIN (${QUEUED_STATUS}) lift ON true
         ${where}
         RETURNING id, status, lift.prior_status),
       timeline AS (
         INSERT INTO run_transitions (run_id, status, via, at) SELECT id, status, 'callback', $3 FROM moved WHERE prior_status <> status
       )`;
    },
    from: 'moved',
    select: 'moved.id, moved.status',
  });
const OUTPUT_WRITES = {
  reported: { statuses: allowedFrom('intermediate_output').filter((st) => st !== 'queued'), any: outputWrite(false, false), ofAgent: outputWrite(true, false) },
  lifting: { statuses: allowedFrom('intermediate_output'), any: outputWrite(false, true), ofAgent: outputWrite(true, true) },
};

/** The parameters of one of OUTPUT_WRITES, in the order its statement takes them. */
function outputParams(write: keyof typeof OUTPUT_WRITES, runId: number, now: Date, patch: Pick<RunPatch, 'outputData' | 'outputs'>, agentId?: number): unknown[] {
  const params: unknown[] = [runId, OUTPUT_WRITES[write].statuses, now, jsonParam(patch.outputData ?? null), patch.outputs ?? null];
  if (agentId !== undefined) params.push(agentId);
  return params;
}

/** What an intermediate output returns when applied: the run stays non-terminal, nobody needs its whole row. */
export type IntermediateResult = { kind: 'applied'; run: Pick<RunRow, 'id' | 'status'> } | Exclude<TransitionResult, { kind: 'applied' | 'noop' }>;

/**
 * Intermediate output (spec 4.8 `output` without complete/failed): records output, lifts a queued run. It is the
 * most frequent write of all (every progress report), so it returns only the run's id and status and announces
 * nothing (no status anyone listens for).
 */
export async function recordIntermediateOutput(
  q: Queryable,
  runId: number,
  now: Date,
  patch: Pick<RunPatch, 'outputData' | 'outputs'>,
  opts: { agentId?: number; guard: RateGuard | null },
): Promise<IntermediateResult | OverLimit> {
  const which = opts.agentId === undefined ? 'any' : 'ofAgent';
  const reported = await writeGuarded<Pick<RunRow, 'id' | 'status'>>(q, opts.guard, {
    params: outputParams('reported', runId, now, patch, opts.agentId),
    fixed: OUTPUT_WRITES.reported[which],
  });
  if (reported && 'kind' in reported) return reported;
  // Not a started run (queued, or not this agent's, or finished): the lift, uncounted (the first write counted the
  // request). Without a guard the write is never over a limit.
  const moved =
    reported ??
    ((await writeGuarded<Pick<RunRow, 'id' | 'status'>>(q, null, {
      params: outputParams('lifting', runId, now, patch, opts.agentId),
      fixed: OUTPUT_WRITES.lifting[which],
    })) as Pick<RunRow, 'id' | 'status'> | null);
  if (moved) return { kind: 'applied', run: moved };
  const current = await findRun(q, runId);
  if (!current || (opts.agentId !== undefined && current.agent_id !== opts.agentId)) return { kind: 'not_found' };
  return { kind: 'backward', run: current };
}

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

/**
 * `p(value)` appends a parameter and returns its placeholder. A bound function rather than an arrow: these are
 * made on every write, and our TypeScript loader (tsx, keepNames) renames every named arrow when it is created.
 */
function placeholderFor(params: unknown[]): (value: unknown) => string {
  return placeholder.bind(null, params);
}

function placeholder(params: unknown[], value: unknown): string {
  return `$${params.push(value)}`;
}
