// The dashboard's rollup (issue 14 "Fast with real data", issue 15 at 2,000 agents): run counts per status and
// outputs, one row per creation day and agent (run_day_rollup, migrations 0010 and 0013), so a 90-day dashboard reads
// a few hundred thousand narrow rows instead of ten million runs. A run's status still changes after its creation
// day closes, so the rollup is refreshed by a sweep every minute, never by the write path. Closed days stay exact
// without waiting for it: a closed day with a run changed since the last refresh (runs_updated_idx) is read from the
// runs table, as are partial days at the period's ends — one day at a time, grouped by agent alone, so PostgreSQL
// hashes a few thousand groups instead of sorting a day's runs. The open day (today) is in the rollup too, as of the
// last refresh, for the runs created before its fresh_through; the runs created since are read from runs. So today's
// figures can lag by up to a refresh interval (issue 15: read from runs, today cost what a day's runs cost, and its
// pages, changed all day, are rarely all-visible, so an index-only read fetched most of them from the heap).
import type { Db, Queryable } from '../storage/db.ts';
import { RUN_STATUSES, type RunStatus } from './run-states.ts';

const DAY_MS = 86_400_000;

export interface RunAggregateFilter {
  /** Runs created at or after `from` and before `to`. */
  from: Date;
  to: Date;
  agentId?: number;
  /** Only agents of these organizations (a filter, or a caller's scope). */
  orgIds?: string[];
}
/**
 * A write stamps updated_at (its instance's clock) before it commits. A refresh that has seen every change up to
 * `now` vouches only for changes stamped this much earlier, so a write committing late, or an instance whose clock
 * runs a little behind, is still caught by the next refresh or read.
 */
const FRESH_MARGIN_MS = 60_000;
/** Serializes refreshes of several instances (pg_advisory_xact_lock). */
const LOCK_ID = 0x41525301;

export interface RollupState {
  /** Every UTC day before this one is in the rollup; this day (open at the refresh) holds its runs created before freshThrough. */
  closedBefore: Date;
  /** The rollup's closed days are exact for every run whose updated_at is at or before this. */
  freshThrough: Date;
}

const dayStart = (at: Date): Date => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
const nextDayStart = (at: Date): Date => new Date(Math.ceil(at.getTime() / DAY_MS) * DAY_MS);
const dayText = (at: Date): string => at.toISOString().slice(0, 10);

export async function rollupState(q: Queryable): Promise<RollupState | null> {
  const { rows } = await q.query<{ closed_before: string; fresh_through: Date }>(
    "SELECT to_char(closed_before, 'YYYY-MM-DD') AS closed_before, fresh_through FROM run_rollup_state",
  );
  const r = rows[0];
  return r ? { closedBefore: new Date(`${r.closed_before}T00:00:00Z`), freshThrough: new Date(r.fresh_through) } : null;
}

/**
 * Brings the rollup up to `now`: the days that closed since the last refresh, and the closed days with a run
 * changed since then, are recomputed from the runs table (`days` counts them); so is the open day, as of `now`, for
 * its runs created before the new fresh_through. The first refresh builds every closed day.
 */
export async function refreshRollup(db: Db, now: Date): Promise<{ days: number }> {
  const today = dayStart(now);
  const fresh = new Date(now.getTime() - FRESH_MARGIN_MS);
  return db.transaction(async (tx) => {
    await tx.exec('SET LOCAL statement_timeout = 0'); // the first build reads every run once
    await tx.query('SELECT pg_advisory_xact_lock($1)', [LOCK_ID]);
    const state = await rollupState(tx);
    let days: Date[];
    if (!state) {
      await tx.query('DELETE FROM run_day_rollup');
      await insertAll(tx, today);
      days = [];
    } else {
      days = await changedDays(tx, state.freshThrough, null, today);
      for (let d = state.closedBefore; d < today; d = new Date(d.getTime() + DAY_MS)) days.push(d);
      days = [...new Map(days.map((d) => [d.getTime(), d])).values()];
      await tx.query('DELETE FROM run_day_rollup WHERE day = ANY($1::date[])', [days.map(dayText)]);
      for (const d of days) await insertDay(tx, d);
    }
    // The open day's rows are rewritten on every refresh; if the clock went back, drop what is no longer closed.
    await tx.query('DELETE FROM run_day_rollup WHERE day >= $1::date', [dayText(today)]);
    const freshThrough = state && state.freshThrough > fresh ? state.freshThrough : fresh;
    if (freshThrough > today) await insertDay(tx, today, new Date(Math.min(freshThrough.getTime(), today.getTime() + DAY_MS)));
    await tx.query(
      `INSERT INTO run_rollup_state (closed_before, fresh_through) VALUES ($1::date, $2)
       ON CONFLICT (singleton) DO UPDATE SET closed_before = EXCLUDED.closed_before, fresh_through = EXCLUDED.fresh_through`,
      [dayText(today), freshThrough],
    );
    return { days: days.length };
  });
}

/** One count column per status, in RUN_STATUSES order: `count(*) FILTER (WHERE status = 'queued')::int AS queued`, … */
const COUNTS = RUN_STATUSES.map((st) => `count(*) FILTER (WHERE status = '${st}')::int AS ${st}`).join(', ');
const COLUMNS = RUN_STATUSES.join(', ');

/**
 * Rollup rows of the runs created in [from, to), within one UTC day (`day`, its date, as a placeholder): grouped by
 * agent alone, so PostgreSQL hashes a few thousand groups; grouped by day and agent it estimated one group per run
 * and sorted the day's runs on disk. `conditions`: further filters on runs.
 */
function dayAggregateSql(p: (value: unknown) => string, from: Date, to: Date, conditions: string[] = []): string {
  const where = [`created_at >= ${p(from)}`, `created_at < ${p(to)}`, ...conditions].join(' AND ');
  return `SELECT ${p(dayText(from))}::date AS day, agent_id, ${COUNTS}, coalesce(sum(outputs), 0)::bigint AS outputs
     FROM runs WHERE ${where} GROUP BY agent_id`;
}

/** The runs created on day `d` (before `to`, for the open day), written as its rollup rows. */
async function insertDay(q: Queryable, d: Date, to = new Date(d.getTime() + DAY_MS)): Promise<void> {
  const params: unknown[] = [];
  const sql = dayAggregateSql((v) => `$${params.push(v)}`, d, to);
  await q.query(`INSERT INTO run_day_rollup (day, agent_id, ${COLUMNS}, outputs) ${sql}`, params);
}

/** The first build: every run created before `to`, in one statement (it reads every run once). */
async function insertAll(q: Queryable, to: Date): Promise<void> {
  await q.query(
    `INSERT INTO run_day_rollup (day, agent_id, ${COLUMNS}, outputs)
     SELECT (created_at AT TIME ZONE 'UTC')::date, agent_id, ${COUNTS}, coalesce(sum(outputs), 0)::bigint
     FROM runs WHERE created_at < $1 GROUP BY 1, 2`,
    [to],
  );
}

/** The UTC creation days in [from, to) (from null: since the first) of the runs changed after `since` (runs_updated_idx). */
async function changedDays(q: Queryable, since: Date, from: Date | null, to: Date): Promise<Date[]> {
  const { rows } = await q.query<{ day: string }>(
    `SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
     FROM runs WHERE updated_at > $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND created_at < $3`,
    [since, from, to],
  );
  return rows.map((r) => new Date(`${r.day}T00:00:00Z`));
}

export type StatusCounts = Record<RunStatus, number>;

/** Runs per status and outputs per UTC creation day, and per agent over the whole period. */
export interface PeriodAggregate {
  byDay: Array<{ day: string; runs: StatusCounts; outputs: number }>;
  byAgent: Array<{ agentId: number; runs: StatusCounts; outputs: number }>;
}

/**
 * The dashboard's figures for [from, to), in one statement whose answer grows with days plus agents: the closed
 * whole days from the rollup, and the open day's runs created before fresh_through when the period covers them all;
 * the rest (partial days at either end, runs created since the refresh, closed days changed since it) aggregated
 * from runs a day at a time, all folded by GROUPING SETS in PostgreSQL. Without a rollup, every row is read from
 * runs, which is also what the tests compare it with.
 */
export async function aggregatePeriod(db: Db, f: RunAggregateFilter): Promise<PeriodAggregate> {
  const state = await rollupState(db);
  const first = nextDayStart(f.from);
  const end = state ? new Date(Math.min(dayStart(f.to).getTime(), state.closedBefore.getTime())) : first;
  // The open day from the rollup: its rows count the runs created from its start to fresh_through.
  const open = state && f.from <= state.closedBefore && f.to >= state.freshThrough && state.freshThrough > state.closedBefore;
  const params: unknown[] = [];
  const p = (value: unknown): string => `$${params.push(value)}`;
  const agent = f.agentId === undefined ? null : `agent_id = ${p(f.agentId)}`;
  const orgs = f.orgIds === undefined ? null : `agent_id IN (SELECT id FROM agents WHERE org_id = ANY(${p(f.orgIds)}::uuid[]))`;
  const filters = [agent, orgs].filter((c) => c !== null);
  const parts: string[] = [];
  /** The runs created in [from, to), read from runs one UTC day at a time. */
  const rawDays = (from: Date, to: Date) => {
    for (let d = from; d < to; ) {
      const next = new Date(Math.min(dayStart(d).getTime() + DAY_MS, to.getTime()));
      parts.push(dayAggregateSql(p, d, next, filters));
      d = next;
    }
  };

  if (!state || (first >= end && !open)) rawDays(f.from, f.to);
  else {
    const changed = first < end ? await changedDays(db, state.freshThrough, first, end) : [];
    const rolledUntil = open ? new Date(state.closedBefore.getTime() + DAY_MS) : end;
    parts.push(
      `SELECT day, agent_id, ${COLUMNS}, outputs FROM run_day_rollup WHERE ${[
        `day >= ${p(dayText(first))}::date`,
        `day < ${p(dayText(rolledUntil))}::date`,
        ...(changed.length > 0 ? [`day <> ALL(${p(changed.map(dayText))}::date[])`] : []),
        ...filters,
      ].join(' AND ')}`,
    );
    for (const d of changed) rawDays(d, new Date(d.getTime() + DAY_MS));
    rawDays(f.from, first);
    rawDays(open ? state.freshThrough : end, f.to);
  }
  const sums = RUN_STATUSES.map((st) => `sum(${st})::bigint AS ${st}`).join(', ');
  const { rows } = await db.query<Record<RunStatus, string> & { day: string | null; agent_id: string | null; outputs: string }>(
    `WITH parts AS (${parts.map((part) => `(${part})`).join(' UNION ALL ')})
     SELECT to_char(day, 'YYYY-MM-DD') AS day, agent_id, ${sums}, sum(outputs)::bigint AS outputs
     FROM parts GROUP BY GROUPING SETS ((day), (agent_id))`,
    params,
  );
  const out: PeriodAggregate = { byDay: [], byAgent: [] };
  for (const r of rows) {
    const runs = Object.fromEntries(RUN_STATUSES.map((st) => [st, Number(r[st])])) as StatusCounts;
    if (r.agent_id !== null) out.byAgent.push({ agentId: Number(r.agent_id), runs, outputs: Number(r.outputs) });
    else out.byDay.push({ day: r.day!, runs, outputs: Number(r.outputs) });
  }
  return out;
}
