// The runs table: its row, inserts, reads and the bookkeeping that never changes a status (the external id of a
// triggered task, a task's return value; poll claims are in poll-claims.ts, the admin list in run-list.ts). Every
// status write is in run-transitions.ts, the only code that writes `runs.status` (house style 9).
import type { Queryable } from '../storage/db.ts';
import { storableJson } from '../lib/storable-json.ts';
import { fixedWrite, isOverLimit, writeGuarded, type GuardableWrite, type OverLimit, type RateGuard } from '../rate-limits/rate-guard.ts';
import type { RunStatus } from './run-states.ts';
import { FIRST_STATUS_ON_TIMELINE, isFirstStatusImplied } from './run-timeline.ts';

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
  /** A runtime call for the run is alive on some instance until then (run-leases.ts). */
  invoke_lease_until: Date | null;
  /** What the service could not do at the runtime for this run (admin run detail). */
  runtime_note: string | null;
  /** The run this one replays (issue 14: admin replay), else null. */
  replay_of: number | null;
}

/** What a hot-path write returns: not the whole row (the pg driver pays ~15 µs per 19-column result, bench). */
export type RunHead = Pick<RunRow, 'id' | 'agent_id' | 'status' | 'created_at' | 'started_at' | 'external_run_id'>;
export const HEAD_COLUMNS = 'id, agent_id, status, created_at, started_at, external_run_id';

/**
 * JSON for a jsonb parameter. JS null and undefined both become SQL NULL (never the JSON literal `null`), so `IS
 * NULL` queries see them. Values are made storable (NUL, lone surrogates): a runtime's answer must never fail the
 * write that records it.
 */
export const jsonParam = (v: unknown): string | null => (v === undefined || v === null ? null : storableJson(v));

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
  /** Runs this service starts at a runtime: the lease of the call about to be made (run-leases.ts). */
  invokeLeaseUntil?: Date | null;
  /** An admin replay (issue 14): the run it starts again. */
  replayOf?: number | null;
}

const INSERT_COLUMNS = `agent_id, status, source, external_run_id, input, metadata, created_by, created_at, started_at, next_poll_at, invoke_lease_until, updated_at, replay_of`;
const insertValues = (r: NewRun) => [
  r.agentId,
  r.status,
  r.source,
  r.externalRunId ?? null,
  jsonParam(r.input ?? {}),
  jsonParam(r.metadata ?? {}),
  r.createdBy ?? null,
  r.now,
  r.startedAt ?? null,
  r.nextPollAt ?? null,
  r.invokeLeaseUntil ?? null,
  r.replayOf ?? null,
];

/**
 * Another write made by the run's own INSERT statement: a CTE reading the CTE `inserted` (the new run's head), so
 * both commit or neither does (an Idempotency-Key's claim). `param` adds a parameter and returns its placeholder.
 */
export type RunInsertCompanion = (param: (value: unknown) => string) => string;

/**
 * insertRun's statement in parts; `also`, a companion's CTE. Its first 12 parameters are insertValues'. The run's
 * first status goes on its timeline unless the timeline implies it (`recordFirst` false: run-timeline.ts).
 */
function insertWrite(also: string | null, recordFirst: boolean): Omit<GuardableWrite, 'params'> {
  return {
    // INSERT … SELECT gives its parameters no column types, hence the casts.
    ctes: (withinLimit) =>
      (withinLimit === null
        ? `inserted AS (INSERT INTO runs (${INSERT_COLUMNS}) VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, $8, $12) RETURNING ${HEAD_COLUMNS})`
        : `inserted AS (
             INSERT INTO runs (${INSERT_COLUMNS})
             SELECT $1::bigint, $2::text, $3::text, $4::text, $5::jsonb, $6::jsonb, $7::uuid, $8::timestamptz, $9::timestamptz,
                    $10::timestamptz, $11::timestamptz, $8::timestamptz, $12::bigint
             WHERE ${withinLimit}
             RETURNING ${HEAD_COLUMNS})`) + (recordFirst ? `, ${FIRST_STATUS_ON_TIMELINE}` : '') + (also === null ? '' : `, ${also}`),
    from: 'inserted',
    // Only the id comes back: the rest of the head is what the statement was given (the driver pays per column read).
    select: 'inserted.id',
  };
}

/** insertRun without a companion: its two texts never change, so they are built once. */
const INSERT_RUN = { recordFirst: fixedWrite(12, insertWrite(null, true)), impliedFirst: fixedWrite(12, insertWrite(null, false)) };

/**
 * Inserts a run; with a guard, in the same statement as the request's rate-limit count (nothing over the limit);
 * with a companion, in the same statement as that write too (a failure of either fails both).
 */
export function insertRun(q: Queryable, run: NewRun): Promise<RunHead>;
export function insertRun(q: Queryable, run: NewRun, guard: RateGuard | null, companion?: RunInsertCompanion | null): Promise<RunHead | OverLimit>;
export async function insertRun(q: Queryable, run: NewRun, guard: RateGuard | null = null, companion: RunInsertCompanion | null = null): Promise<RunHead | OverLimit> {
  const params: unknown[] = insertValues(run);
  const recordFirst = !isFirstStatusImplied(run.status, run.source);
  const write = companion
    ? { params, ...insertWrite(companion((v) => `$${params.push(v)}`), recordFirst) }
    : { params, fixed: recordFirst ? INSERT_RUN.recordFirst : INSERT_RUN.impliedFirst };
  const row = await writeGuarded<Pick<RunHead, 'id'>>(q, guard, write);
  if (!row) throw new Error('run insert returned no row');
  if (isOverLimit(row)) return row;
  return { id: row.id, agent_id: run.agentId, status: run.status, created_at: run.now, started_at: run.startedAt ?? null, external_run_id: run.externalRunId ?? null };
}

/**
 * Idempotent on (agent_id, external_run_id): concurrent duplicates all get the one row. ON CONFLICT DO NOTHING
 * waits for a concurrent inserter's commit, so the SELECT that follows a lost race always finds the winner.
 */
export async function insertRunOnce(q: Queryable, run: NewRun & { externalRunId: string }): Promise<{ run: RunRow; created: boolean }> {
  const { rows } = await q.query<RunRow>(
    `WITH inserted AS (
       INSERT INTO runs (${INSERT_COLUMNS})
       VALUES ($1, $2, $3, $4, $5::jsonb, $6::jsonb, $7, $8, $9, $10, $11, $8, $12)
       ON CONFLICT (agent_id, external_run_id) WHERE external_run_id IS NOT NULL DO NOTHING RETURNING *
     ), ${FIRST_STATUS_ON_TIMELINE}
     SELECT * FROM inserted`,
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

/** The agent a run belongs to (who may see the run follows from it), without reading the run's data. */
export async function agentOfRun(q: Queryable, runId: number): Promise<number | null> {
  const { rows } = await q.query<{ agent_id: number }>('SELECT agent_id FROM runs WHERE id = $1', [runId]);
  return rows[0] ? Number(rows[0].agent_id) : null;
}

export async function findRunByExternalId(q: Queryable, agentId: number, externalRunId: string): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>('SELECT * FROM runs WHERE agent_id = $1 AND external_run_id = $2', [agentId, externalRunId]);
  return rows[0] ?? null;
}

/** The runs a runtime knows as `externalRunId` (one per agent at most), with their agent's target (alerts). */
export async function findRunsByRuntimeExternalId(q: Queryable, runtimeId: number, externalRunId: string): Promise<Array<{ id: number; target: string | null }>> {
  const { rows } = await q.query<{ id: number; target: string | null }>(
    `SELECT r.id, a.target FROM runs r JOIN agents a ON a.id = r.agent_id
     WHERE a.runtime_id = $1 AND r.external_run_id = $2 ORDER BY r.id LIMIT 100`,
    [runtimeId, externalRunId],
  );
  return rows;
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
 * Locks one run of one agent until the surrounding transaction ends (waitpoints: "is it still waiting on this very
 * token?" and the move, atomically). Callers keep the transaction short (no network calls inside it): on PGlite a
 * transaction holds the only connection.
 */
export async function lockRunOfAgent(q: Queryable, runId: number, agentId: number): Promise<Pick<RunRow, 'status' | 'wait_state'> | null> {
  const { rows } = await q.query<Pick<RunRow, 'status' | 'wait_state'>>(
    'SELECT status, wait_state FROM runs WHERE id = $1 AND agent_id = $2 FOR UPDATE',
    [runId, agentId],
  );
  return rows[0] ?? null;
}

/**
 * Runs a write that carries the runtime's id for a run, so that the id can never fail it: an id the column refuses
 * (empty, over 255 characters) is left out up front, and one another run of the same agent already holds
 * (runs_external_agent_key, migration 0016: a runtime that reuses ids, a constant `x-n8n-execution-id`, an n8n whose ids
 * restarted) makes the write run again without it. The caller sees `external_run_id` still null.
 */
export async function withExternalRunId<T>(offered: string | null | undefined, write: (externalRunId: string | null) => Promise<T>): Promise<T> {
  const id = typeof offered === 'string' && offered.length >= 1 && offered.length <= 255 ? offered : null;
  try {
    return await write(id);
  } catch (err) {
    const e = err as { code?: unknown; constraint?: unknown } | null;
    if (id === null || e?.code !== '23505' || e.constraint !== 'runs_external_agent_key') throw err;
    return write(null);
  }
}

/**
 * A task runtime accepted the trigger: keeps its run id and schedules the first status poll; the trigger's lease
 * is over (the poller follows the run from here). Writes no status; a run that already reached a terminal state
 * (a fast callback) keeps next_poll_at NULL.
 */
export function recordTriggered(q: Queryable, runId: number, externalRunId: string | null, nextPollAt: Date | null, now: Date): Promise<TriggeredHead | null> {
  return withExternalRunId(externalRunId, async (id) => {
    const { rows } = await q.query<TriggeredHead>(RECORD_TRIGGERED, [runId, id, nextPollAt, now]);
    return rows[0] ?? null;
  });
}
/** What recordTriggered can find changed in a run's head (a callback may have come first); the rest never changes. */
export type TriggeredHead = Pick<RunHead, 'status' | 'started_at' | 'external_run_id'>;

// Built once: a text made on each call is hashed again on each call to find its prepared statement.
const RECORD_TRIGGERED = `UPDATE runs SET
         external_run_id = coalesce(external_run_id, $2),
         next_poll_at = CASE WHEN status IN ('queued', 'running', 'waiting') THEN $3::timestamptz ELSE next_poll_at END,
         invoke_lease_until = NULL,
         updated_at = $4
       WHERE id = $1 RETURNING status, started_at, external_run_id`;

/**
 * Spec 4.2 (task runtime): a completed run's output_data is the task's return value as the runtime reports it,
 * even when a callback completed the run first with other values. Writes no status; only a completed run.
 */
export async function replaceCompletedOutput(q: Queryable, runId: number, outputData: unknown, outputs: number | null, now: Date): Promise<RunRow | null> {
  const { rows } = await q.query<RunRow>(
    `UPDATE runs SET output_data = $2::jsonb, outputs = coalesce($3::bigint, outputs), updated_at = $4
     WHERE id = $1 AND status = 'completed' RETURNING *`,
    [runId, jsonParam(outputData), outputs, now],
  );
  return rows[0] ?? null;
}
