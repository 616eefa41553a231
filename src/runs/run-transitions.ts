// Every write of one run's `runs.status` (house style 9), as SQL; the timeouts' set-based writes are beside it
// (timeout-transitions.ts). Each transition is one guarded UPDATE whose allowed "from" statuses come from the state
// machine (run-states.ts); the same statement queues the outbound events of the new status in the outbox, records it
// on the run's timeline with the path that wrote it, and NOTIFYs waiters (`announced`, run-announcements.ts), so a
// transition, its events, its timeline entry and its wake-up are atomic.
import type { Queryable } from '../storage/db.ts';
import { fixedWrite, writeGuarded, type OverLimit, type RateGuard } from '../rate-limits/rate-guard.ts';
import type { TransitionPath } from '../metrics/metrics.ts';
import { allowedFrom, classifyRefusal, type RunEvent, type RunStatus } from './run-states.ts';
import { findRun, jsonParam, withExternalRunId, type RunRow, type WaitState } from './runs-repo.ts';
import { announced } from './run-announcements.ts';
import { traceStatusChange } from './run-traces.ts';

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
    await traceStatusChange(q, moved, t.via);
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
