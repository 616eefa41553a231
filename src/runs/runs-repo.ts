// The runs repository: the only code that writes `runs.status` (house style 9). Every transition is one guarded
// UPDATE whose allowed "from" statuses come from run-states.ts; the same statement queues outbound events for the
// new status in the outbox and NOTIFYs waiters, so a transition, its events and its wake-up are atomic.
import type { Queryable } from '../storage/db.ts';
import { storableJson } from '../lib/storable-json.ts';
import { allowedFrom, classifyRefusal, type RunEvent, type RunStatus } from './run-states.ts';
import { COUNT_COLUMN, countedOrPlain, type CountedWrite } from '../rate-limits/counted-write.ts';

export interface WaitState {
  tokenId: string;
  description: string;
  url: string | null;
  output: unknown;
}

export interface RunRow {
  id: number;
  agent_id: number;
  status: RunStatus;
  source: string;
  external_run_id: string | null;
  input: unknown;
  metadata: unknown;
  output_data: unknown;
  outputs: number;
  error: unknown;
  duration_ms: number | null;
  wait_state: WaitState | null;
  created_by: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
  next_poll_at: Date | null;
}

export const RUN_EVENTS_CHANNEL = 'ars_run';

/**
 * NOTIFY only for the statuses someone listens for: terminal ones (sync waits, held calls, streams) and `waiting`
 * (outbox nudge). A NOTIFY takes a commit-time lock on PostgreSQL, so sending one on every intermediate output
 * cut callback throughput severalfold (bench).
 */
const NOTIFY_IF_LISTENED = (t: string): string =>
  `CASE WHEN ${t}.status IN ('completed', 'failed', 'cancelled', 'waiting') THEN pg_notify('${RUN_EVENTS_CHANNEL}', ${t}.id || ':' || ${t}.status) END`;

// JS null and undefined both become SQL NULL (never the JSON literal `null`), so `IS NULL` queries see them.
// Values are made storable (NUL, lone surrogates): a runtime's answer must never fail the write that records it.
const json = (v: unknown): string | null => (v === undefined || v === null ? null : storableJson(v));

export interface NewRun {
  agentId: number;
  status: RunStatus;
  source: string;
  now: Date;
  externalRunId?: string | null;
  input?: unknown;
  metadata?: unknown;
  createdBy?: string | null;
  startedAt?: Date | null;
  nextPollAt?: Date | null;
}

const INSERT_COLUMNS = `agent_id, status, source, external_run_id, input, metadata, created_by, created_at, started_at, next_poll_at, updated_at`;
const insertValues = (r: NewRun) => [
  r.agentId,
  r.status,
  r.source,
  r.externalRunId ?? null,
  json(r.input ?? {}),
  json(r.metadata ?? {}),
  r.createdBy ?? null,
  r.now,
  r.startedAt ?? null,
  r.nextPollAt ?? null,
];

/**
 * What a write on a run's hot path returns: the columns its callers go on with. Not the whole row: the pg driver
 * pays about 15 µs per 19-column result (bench), and on /trigger that was two results per request.
 */
export type RunHead = Pick<RunRow, 'id' | 'agent_id' | 'status' | 'created_at' | 'started_at' | 'external_run_id'>;
const HEAD_COLUMNS = 'id, agent_id, status, created_at, started_at, external_run_id';

/** Inserts a run; with `counted`, in the same statement as the request's rate-limit count (nothing over the limit). */
export async function insertRun(q: Queryable, run: NewRun, counted?: CountedWrite | null): Promise<RunHead> {
  const row = await writeMaybeCounted<RunHead>(
    q,
    (c) => {
      const params: unknown[] = insertValues(run);
      if (!c) {
        return { sql: `INSERT INTO runs (${INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $8) RETURNING ${HEAD_COLUMNS}`, params };
      }
      const { cte, withinLimit } = c.sql((v) => `$${params.push(v)}`);
      // INSERT … SELECT gives its parameters no column types, hence the casts.
      return {
        sql: `WITH ${cte}, inserted AS (
                INSERT INTO runs (${INSERT_COLUMNS})
                SELECT $1::bigint, $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb, $7::uuid, $8::timestamptz, $9::timestamptz,
                       $10::timestamptz, $8::timestamptz
                WHERE ${withinLimit}
                RETURNING ${HEAD_COLUMNS}
              )
              ${selectWithCount('inserted', '', c)}`,
        params,
      };
    },
    counted,
  );
  if (!row) throw new Error('run insert returned no row');
  return row;
}

/**
 * Idempotent on (agent_id, external_run_id): concurrent duplicates all get the one row. ON CONFLICT DO NOTHING
 * waits for a concurrent inserter's commit, so the SELECT that follows a lost race always finds the winner.
 */
export async function insertRunOnce(q: Queryable, run: NewRun & { externalRunId: string }): Promise<{ run: RunRow; created: boolean }> {
  const { rows } = await q.query<RunRow>(
    `INSERT INTO runs (${INSERT_COLUMNS})
     VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $8)
     ON CONFLICT (agent_id, external_run_id) DO NOTHING RETURNING *`,
    insertValues(run),
  );
  if (rows[0]) return { run: rows[0], created: true };
  const existing = await findRunByExternalId(q, run.agentId, run.externalRunId);
  if (!existing) throw new Error('run vanished after a conflicting insert');
  return { run: existing, created: false };
}

export async function findRun(q: Queryable, runId: number): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>('SELECT * FROM runs WHERE id = $1', [runId]);
  return rows[0] ?? null;
}

export async function findRunByExternalId(q: Queryable, agentId: number, externalRunId: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>('SELECT * FROM runs WHERE agent_id = $1 AND external_run_id = $2', [agentId, externalRunId]);
  return rows[0] ?? null;
}

/** Fields a transition may write besides status. `undefined` leaves a column as it is. */
export interface RunPatch {
  outputData?: unknown;
  outputs?: number | null; // null/undefined: keep (spec 4.8: the latest non-null value wins)
  error?: unknown;
  durationMs?: number | null; // terminal only; absent: wall clock from started_at (or created_at)
  startedAt?: Date | null; // stamped once: coalesce keeps the first
  completedAt?: Date | null; // terminal only; absent: now
  externalRunId?: string | null; // kept if already set
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
 */
export async function transition(
  q: Queryable,
  runId: number,
  event: RunEvent,
  to: RunStatus,
  now: Date,
  patch: RunPatch = {},
  opts: { agentId?: number; counted?: CountedWrite | null } = {},
): Promise<TransitionResult> {
  const moved = await writeMaybeCounted(q, (c) => transitionStatement(runId, event, to, now, patch, opts.agentId, c), opts.counted);
  if (moved) return { kind: 'applied', run: moved };

  const current = await findRun(q, runId);
  if (!current || (opts.agentId !== undefined && current.agent_id !== opts.agentId)) return { kind: 'not_found' };
  return { kind: classifyRefusal(event, current.status, to), run: current };
}

/** The one guarded UPDATE of `transition`, with its outbox rows and NOTIFY (and the count, when given). */
function transitionStatement(
  runId: number,
  event: RunEvent,
  to: RunStatus,
  now: Date,
  patch: RunPatch,
  agentId: number | undefined,
  counted: CountedWrite | null | undefined,
): Statement {
  const terminal = to === 'completed' || to === 'failed' || to === 'cancelled';
  const params: unknown[] = [runId, allowedFrom(event, to), to, now];
  const p = placeholderFor(params);
  const sets = ['status = $3', 'updated_at = $4'];

  if (to !== 'queued') sets.push(`started_at = coalesce(started_at, ${p(patch.startedAt ?? null)}::timestamptz, $4)`);
  if (patch.outputData !== undefined) sets.push(`output_data = ${p(json(patch.outputData))}::jsonb`);
  if (patch.outputs !== undefined && patch.outputs !== null) sets.push(`outputs = ${p(patch.outputs)}`);
  if (patch.error !== undefined) sets.push(`error = ${p(json(patch.error))}::jsonb`);
  if (patch.externalRunId) sets.push(`external_run_id = coalesce(external_run_id, ${p(patch.externalRunId)})`);
  if (patch.metadata !== undefined) sets.push(`metadata = ${p(json(patch.metadata))}::jsonb`);
  if (patch.waitState !== undefined) sets.push(`wait_state = ${p(json(patch.waitState))}::jsonb`);
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
  const agentGuard = agentId === undefined ? '' : ` AND agent_id = ${p(agentId)}`;
  const count = counted?.sql(p);

  return {
    sql: `WITH ${count ? `${count.cte}, ` : ''}moved AS (
       UPDATE runs SET ${sets.join(', ')}
       WHERE id = $1 AND status = ANY($2::text[])${agentGuard}${count ? ` AND ${count.withinLimit}` : ''}
       RETURNING *
     ), queued_events AS (
       INSERT INTO outbox (webhook_action_id, run_id, event, message_id, snapshot, next_attempt_at)
       SELECT wa.id, moved.id, moved.status, 'msg_' || moved.id || '_' || moved.status || '_' || wa.id
              || CASE WHEN moved.status = 'waiting' THEN '_' || md5(coalesce(moved.wait_state->>'tokenId', '')) ELSE '' END,
              to_jsonb(moved), $4
       FROM moved JOIN webhook_actions wa ON wa.agent_id = moved.agent_id AND wa.on_state = moved.status
       ON CONFLICT (message_id) DO NOTHING
     )
     ${selectWithCount('moved', `, ${NOTIFY_IF_LISTENED('moved')} AS notified`, counted)}`,
    params,
  };
}

interface Statement {
  sql: string;
  params: unknown[];
}

/**
 * The statement's final SELECT of the written row `t`. With a count it always returns one row: the count, and the
 * row's columns all NULL when the write did not apply (over the limit, or refused by its own guard).
 */
function selectWithCount(t: string, extra: string, counted: CountedWrite | null | undefined): string {
  return counted
    ? `SELECT ${t}.*${extra}, rate_count.count AS ${COUNT_COLUMN} FROM rate_count LEFT JOIN ${t} ON true`
    : `SELECT ${t}.*${extra} FROM ${t}`;
}

/**
 * Runs a write built with or without the request's count (CountedWrite) and returns the written row, or null
 * when the write did not apply. Over the limit, `settle` throws the 429 before anything else happens.
 */
async function writeMaybeCounted<R extends { id: number } = RunRow>(
  q: Queryable,
  build: (counted?: CountedWrite) => Statement,
  counted: CountedWrite | null | undefined,
): Promise<R | null> {
  if (!counted) return clean(await firstRow<Written<R>>(q, build()));
  return countedOrPlain(
    counted,
    async () => {
      const row = (await firstRow<Written<R>>(q, build(counted)))!;
      const count = row[COUNT_COLUMN]!; // read before clean() drops it
      return { result: row.id === null ? null : clean(row), count };
    },
    async () => clean(await firstRow<Written<R>>(q, build())),
  );
}

async function firstRow<R>(q: Queryable, { sql, params }: Statement): Promise<R | null> {
  return (await q.query<R>(sql, params)).rows[0] ?? null;
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

type Written<R> = R & { notified?: unknown; [COUNT_COLUMN]?: number };

/** Drops the statement's helper columns from the row. */
function clean<R>(row: Written<R> | null): R | null {
  if (!row) return null;
  delete row.notified;
  delete row[COUNT_COLUMN];
  return row;
}

/** What an intermediate output returns when applied: the run stays non-terminal, nobody needs its whole row. */
export type IntermediateResult = { kind: 'applied'; run: Pick<RunRow, 'id' | 'status'> } | Exclude<TransitionResult, { kind: 'applied' | 'noop' }>;

/**
 * Intermediate output (spec 4.8 `output` without complete/failed): records output, lifts a queued run. It is the
 * most frequent write of all (every progress report), so it returns only the run's id and status.
 */
export async function recordIntermediateOutput(
  q: Queryable,
  runId: number,
  now: Date,
  patch: Pick<RunPatch, 'outputData' | 'outputs'>,
  opts: { agentId?: number; counted?: CountedWrite | null } = {},
): Promise<IntermediateResult> {
  const moved = await writeMaybeCounted<Pick<RunRow, 'id' | 'status'>>(
    q,
    (c) => {
      const params: unknown[] = [runId, allowedFrom('intermediate_output'), now, json(patch.outputData ?? null), patch.outputs ?? null];
      const p = placeholderFor(params);
      const agentGuard = opts.agentId === undefined ? '' : ` AND agent_id = ${p(opts.agentId)}`;
      const count = c?.sql(p);
      const update = `UPDATE runs SET
           status = CASE WHEN status = 'queued' THEN 'running' ELSE status END,
           started_at = coalesce(started_at, $3),
           output_data = coalesce($4::jsonb, output_data),
           outputs = coalesce($5::bigint, outputs),
           updated_at = $3
         WHERE id = $1 AND status = ANY($2::text[])${agentGuard}${count ? ` AND ${count.withinLimit}` : ''}
         RETURNING id, status`;
      return { sql: count ? `WITH ${count.cte}, moved AS (${update}) ${selectWithCount('moved', '', c)}` : update, params };
    },
    opts.counted,
  );
  if (moved) return { kind: 'applied', run: moved };
  const current = await findRun(q, runId);
  if (!current || (opts.agentId !== undefined && current.agent_id !== opts.agentId)) return { kind: 'not_found' };
  return { kind: 'backward', run: current };
}

/**
 * A task runtime accepted the trigger: keeps its run id and schedules the first status poll. Writes no status;
 * a run that already reached a terminal state (a fast callback) keeps next_poll_at NULL.
 */
export async function recordTriggered(q: Queryable, runId: number, externalRunId: string | null, nextPollAt: Date | null, now: Date): Promise<RunHead | null> {
  const { rows } = await q.query<RunHead>(
    `UPDATE runs SET
       external_run_id = coalesce(external_run_id, $2),
       next_poll_at = CASE WHEN status IN ('queued', 'running', 'waiting') THEN $3::timestamptz ELSE next_poll_at END,
       updated_at = $4
     WHERE id = $1 RETURNING ${HEAD_COLUMNS}`,
    [runId, externalRunId, nextPollAt, now],
  );
  return rows[0] ?? null;
}

/** Synchronous waits' backstop: which of these runs are terminal now (one statement for every waiter). */
export async function findTerminalAmong(q: Queryable, runIds: readonly number[]): Promise<Array<{ id: number; status: RunStatus }>> {
  if (runIds.length === 0) return [];
  const { rows } = await q.query<{ id: number; status: RunStatus }>(
    `SELECT id, status FROM runs WHERE id = ANY($1::bigint[]) AND status IN ('completed', 'failed', 'cancelled')`,
    [runIds],
  );
  return rows;
}

/** Synchronous waits' first look, batched: the status of each of these runs that exists. */
export async function findRunStatuses(q: Queryable, runIds: readonly number[]): Promise<Array<{ id: number; status: RunStatus }>> {
  if (runIds.length === 0) return [];
  const { rows } = await q.query<{ id: number; status: RunStatus }>('SELECT id, status FROM runs WHERE id = ANY($1::bigint[])', [runIds]);
  return rows;
}

/**
 * Spec 4.2 (task runtime): a completed run's output_data is the task's return value as the runtime reports it,
 * even when a callback completed the run first with other values. Writes no status; only a completed run.
 */
export async function replaceCompletedOutput(q: Queryable, runId: number, outputData: unknown, outputs: number | null, now: Date): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(
    `UPDATE runs SET output_data = $2::jsonb, outputs = coalesce($3::bigint, outputs), updated_at = $4
     WHERE id = $1 AND status = 'completed' RETURNING *`,
    [runId, outputData === null || outputData === undefined ? null : json(outputData), outputs, now],
  );
  return rows[0] ?? null;
}

/** How many runs one timeout statement fails at most; the sweeper repeats until a batch comes back short. */
export const TIMEOUT_BATCH = 500;

/**
 * Spec part 3 "queued → failed, 10 minutes since creation" as one set-based guarded UPDATE. The statuses come
 * from the state machine (terminal moves allowed from `queued`); the outbox rows and NOTIFYs are queued in the
 * same statement, exactly as `transition` does. Rows locked by another instance are skipped, not waited for.
 */
export async function failQueuedTimedOut(q: Queryable, now: Date, queuedTimeoutMs: number, reason: string): Promise<RunRow[]> {
  const from = allowedFrom('terminal', 'failed').filter((s) => s === 'queued');
  return failSetBased(
    q,
    `SELECT id FROM runs WHERE status = ANY($2::text[]) AND created_at < $1::timestamptz - make_interval(secs => $4::double precision)
     ORDER BY created_at LIMIT ${TIMEOUT_BATCH} FOR UPDATE SKIP LOCKED`,
    [now, from, JSON.stringify(reason), queuedTimeoutMs / 1000],
  );
}

/**
 * Spec part 3 "running → failed, running timeout exceeded, measured from started_at" (rule 2: queued time never
 * counts). Only `running`: a `waiting` run is failed by the poll after it resumes (rule 3), not here.
 */
export async function failRunningTimedOut(q: Queryable, now: Date, reason: string): Promise<RunRow[]> {
  const from = allowedFrom('terminal', 'failed').filter((s) => s === 'running');
  return failSetBased(
    q,
    `SELECT r.id FROM runs r JOIN agents a ON a.id = r.agent_id
     WHERE r.status = ANY($2::text[]) AND r.started_at IS NOT NULL
       AND r.started_at < $1::timestamptz - make_interval(secs => a.running_timeout_ms / 1000.0)
     ORDER BY r.started_at LIMIT ${TIMEOUT_BATCH} FOR UPDATE OF r SKIP LOCKED`,
    [now, from, JSON.stringify(reason)],
  );
}

/** Both timeout kinds, queued first. */
export async function failTimedOut(q: Queryable, now: Date, queuedTimeoutMs: number, reasons: { queued: string; running: string }): Promise<RunRow[]> {
  const queued = await failQueuedTimedOut(q, now, queuedTimeoutMs, reasons.queued);
  const running = await failRunningTimedOut(q, now, reasons.running);
  return [...queued, ...running];
}

/**
 * Fails the runs `pick` selects ($1 now, $2 allowed statuses, $3 error JSON): a terminal write stamping
 * completed_at and the wall-clock duration, re-checking the status guard on the row it locks. Outbox and NOTIFY
 * as in `transition`.
 */
async function failSetBased(q: Queryable, pick: string, params: unknown[]): Promise<RunRow[]> {
  const { rows } = await q.query<RunRow>(
    `WITH picked AS (${pick}),
     moved AS (
       UPDATE runs SET status = 'failed', updated_at = $1, error = $3::jsonb, completed_at = $1,
         duration_ms = greatest(0, round(extract(epoch from ($1::timestamptz - coalesce(started_at, created_at))) * 1000))::bigint,
         next_poll_at = NULL, wait_state = NULL
       FROM picked WHERE runs.id = picked.id AND runs.status = ANY($2::text[])
       RETURNING runs.*
     ), queued_events AS (
       INSERT INTO outbox (webhook_action_id, run_id, event, message_id, snapshot, next_attempt_at)
       SELECT wa.id, moved.id, moved.status, 'msg_' || moved.id || '_' || moved.status || '_' || wa.id, to_jsonb(moved), $1
       FROM moved JOIN webhook_actions wa ON wa.agent_id = moved.agent_id AND wa.on_state = moved.status
       ON CONFLICT (message_id) DO NOTHING
     )
     SELECT moved.*, ${NOTIFY_IF_LISTENED('moved')} AS notified FROM moved`,
    params,
  );
  return rows.map((row) => clean(row)!);
}
