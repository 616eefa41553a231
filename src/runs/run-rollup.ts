// The dashboard's rollup (issue 14 "Fast with real data", issue 15 at 2,000 agents and ten million runs): run counts
// per status and outputs, one row per creation day and agent (run_day_rollup, migrations 0010 and 0013), so a
// 90-day dashboard reads rows per day and agent instead of ten million runs; and two tables derived from it
// (migration 0018): per day and organization (runs per day, when no agent is asked for) and per agent and aligned
// span of 2 to 256 closed days (runs per agent over a period, about eight rows per agent for 90 days). A run's status
// still changes after its creation day closes, so the rollup is refreshed by a sweep every minute, never by the
// write path. Closed days stay exact without waiting for it: a closed day with a run changed since the last refresh
// (runs_updated_idx) is read from the runs table, as are partial days at the period's ends (run-aggregate.ts). The
// open day (today) is in the rollup too, as of the last refresh, for the runs created before its fresh_through; the
// runs created since are read from runs. So today's figures can lag by up to a refresh interval (issue 15: read from
// runs, today cost what a day's runs cost, and its pages, changed all day, are rarely all-visible, so an index-only
// read fetched most of them from the heap).
//
// Runs deleted by retention (ARS_RUN_RETENTION_DAYS, runs/run-retention.ts) are counted in run_day_deleted per day
// and agent, by the statement that deletes them, and every count of a day's runs here adds that day's row: so the
// rollup, a day recomputed after a surviving run of it changed, and a day read from runs all keep the deleted runs
// (decisions.md "Data lifecycle"). A deleted run counts as created at the start of its day: a part of a day read
// from runs holds them when it starts at 00:00 UTC.
import type { Db, Queryable } from '../storage/db.ts';
import { RUN_STATUSES } from './run-states.ts';

const DAY_MS = 86_400_000;

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

export const dayStart = (at: Date): Date => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS);
export const nextDayStart = (at: Date): Date => new Date(Math.ceil(at.getTime() / DAY_MS) * DAY_MS);
export const dayText = (at: Date): string => at.toISOString().slice(0, 10);
/** Days since 1970-01-01 (UTC), as PostgreSQL's `date - DATE '1970-01-01'`. */
export const dayNumber = (at: Date): number => Math.floor(at.getTime() / DAY_MS);
export const dayOfNumber = (n: number): string => dayText(new Date(n * DAY_MS));

/** run_span_rollup's sizes, in days: the widest covers most of a year, the dashboard's longest period. */
export const SPANS = [2, 4, 8, 16, 32, 64, 128, 256] as const;

/**
 * Whole days [first, end) (day numbers) as aligned spans, widest first: at most two of each size. A span of 1 is a
 * run_day_rollup day.
 */
export function spanCover(first: number, end: number): Array<{ start: number; span: number }> {
  const cover: Array<{ start: number; span: number }> = [];
  for (let start = first; start < end; ) {
    let span: number = SPANS[SPANS.length - 1]!;
    while (span > 1 && (start % span !== 0 || start + span > end)) span /= 2;
    cover.push({ start, span });
    start += span;
  }
  return cover;
}

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
      for (const table of ['run_day_rollup', 'run_day_org_rollup', 'run_span_rollup']) await tx.query(`DELETE FROM ${table}`);
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
    const rebuilt = state ? days : null; // null: the first build, every day
    await refreshOrgDays(tx, rebuilt, today);
    await refreshSpans(tx, rebuilt, today);
    await tx.query(
      `INSERT INTO run_rollup_state (closed_before, fresh_through) VALUES ($1::date, $2)
       ON CONFLICT (singleton) DO UPDATE SET closed_before = EXCLUDED.closed_before, fresh_through = EXCLUDED.fresh_through`,
      [dayText(today), freshThrough],
    );
    return { days: days.length };
  });
}

/** One count column per status, in RUN_STATUSES order: `count(*) FILTER (WHERE status = 'queued')::int AS queued`, … */
export const COUNTS = RUN_STATUSES.map((st) => `count(*) FILTER (WHERE status = '${st}')::int AS ${st}`).join(', ');
export const COLUMNS = RUN_STATUSES.join(', ');
/**
 * Rollup rows summed, column by column: the counts as `counts` (int for a rollup row, a day's or a span's runs of one
 * agent or organization; bigint for an answer), outputs as bigint.
 */
export const sumColumns = (counts: 'int' | 'bigint'): string =>
  `${RUN_STATUSES.map((st) => `sum(${st})::${counts} AS ${st}`).join(', ')}, sum(outputs)::bigint AS outputs`;

/**
 * Rollup rows of the runs created in [from, to), within one UTC day (`day`, its date, as a placeholder): grouped by
 * agent alone, so PostgreSQL hashes a few thousand groups; grouped by day and agent it estimated one group per run
 * and sorted the day's runs on disk. From the day's start, with its deleted runs (run_day_deleted). `conditions`:
 * further filters on agent_id.
 */
export function dayAggregateSql(p: (value: unknown) => string, from: Date, to: Date, conditions: string[] = []): string {
  const where = [`created_at >= ${p(from)}`, `created_at < ${p(to)}`, ...conditions].join(' AND ');
  const day = `${p(dayText(from))}::date`;
  const live = `SELECT ${day} AS day, agent_id, ${COUNTS}, coalesce(sum(outputs), 0)::bigint AS outputs
     FROM runs WHERE ${where} GROUP BY agent_id`;
  if (from.getTime() !== dayStart(from).getTime()) return live;
  const deleted = `SELECT day, agent_id, ${COLUMNS}, outputs FROM run_day_deleted WHERE ${[`day = ${day}`, ...conditions].join(' AND ')}`;
  return `SELECT day, agent_id, ${sumColumns('int')} FROM (${live} UNION ALL ${deleted}) d GROUP BY day, agent_id`;
}

/** The runs created on day `d` (before `to`, for the open day), written as its rollup rows. */
async function insertDay(q: Queryable, d: Date, to = new Date(d.getTime() + DAY_MS)): Promise<void> {
  const params: unknown[] = [];
  const sql = dayAggregateSql((v) => `$${params.push(v)}`, d, to);
  await q.query(`INSERT INTO run_day_rollup (day, agent_id, ${COLUMNS}, outputs) ${sql}`, params);
}

/** The first build: every run created before `to`, and the deleted ones, in one statement (it reads every run once). */
async function insertAll(q: Queryable, to: Date): Promise<void> {
  await q.query(
    `INSERT INTO run_day_rollup (day, agent_id, ${COLUMNS}, outputs)
     SELECT day, agent_id, ${sumColumns('int')} FROM (
       SELECT (created_at AT TIME ZONE 'UTC')::date AS day, agent_id, ${COUNTS}, coalesce(sum(outputs), 0)::bigint AS outputs
       FROM runs WHERE created_at < $1 GROUP BY 1, 2
       UNION ALL
       SELECT day, agent_id, ${COLUMNS}, outputs FROM run_day_deleted WHERE day < $1::date
     ) d GROUP BY day, agent_id`,
    [to],
  );
}

/** run_day_org_rollup for `days` and the open day (null: every day), from run_day_rollup. */
async function refreshOrgDays(q: Queryable, days: Date[] | null, today: Date): Promise<void> {
  const params = days === null ? [] : [dayText(today), days.map(dayText)];
  const which = (day: string) => (days === null ? 'true' : `(${day} >= $1::date OR ${day} = ANY($2::date[]))`);
  await q.query(`DELETE FROM run_day_org_rollup WHERE ${which('day')}`, params);
  await q.query(
    `INSERT INTO run_day_org_rollup (day, org_id, ${COLUMNS}, outputs)
     SELECT r.day, a.org_id, ${sumColumns('int')} FROM run_day_rollup r JOIN agents a ON a.id = r.agent_id WHERE ${which('r.day')}
     GROUP BY r.day, a.org_id`,
    params,
  );
}

/**
 * run_span_rollup for every span holding one of `days` (null: every span), each size summed from the size half as
 * wide (two rows per agent), smallest first; only spans whose days have all closed (before `today`).
 */
async function refreshSpans(q: Queryable, days: Date[] | null, today: Date): Promise<void> {
  const todayN = dayNumber(today);
  // The clock went back: a span holding a day no longer closed goes.
  await q.query('DELETE FROM run_span_rollup WHERE start_day + span > $1::date', [dayText(today)]);
  for (const span of SPANS) {
    const half = span / 2;
    const [table, day] = half === 1 ? ['run_day_rollup', 'day'] : ['run_span_rollup', 'start_day'];
    const halves = half === 1 ? [] : [`span = ${half}`];
    const params: unknown[] = [dayText(today)];
    if (days !== null) {
      const starts = [...new Set(days.map((d) => dayNumber(d) - (dayNumber(d) % span)))].filter((n) => n + span <= todayN);
      if (starts.length === 0) continue;
      await q.query(`DELETE FROM run_span_rollup WHERE span = ${span} AND start_day = ANY($1::date[])`, [starts.map(dayOfNumber)]);
      halves.push(`${day} = ANY($${params.push(starts.flatMap((n) => [n, n + half]).map(dayOfNumber))}::date[])`);
    }
    const spanStart = `${day} - ((${day} - DATE '1970-01-01') % ${span})`;
    await q.query(
      `INSERT INTO run_span_rollup (span, start_day, agent_id, ${COLUMNS}, outputs)
       SELECT ${span}, ${spanStart}, agent_id, ${sumColumns('int')} FROM ${table}
       WHERE ${[...halves, `${spanStart} + ${span} <= $1::date`].join(' AND ')}
       GROUP BY 2, 3`,
      params,
    );
  }
}

/** The UTC creation days in [from, to) (from null: since the first) of the runs changed after `since` (runs_updated_idx). */
export async function changedDays(q: Queryable, since: Date, from: Date | null, to: Date): Promise<Date[]> {
  const { rows } = await q.query<{ day: string }>(
    `SELECT DISTINCT to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day
     FROM runs WHERE updated_at > $1 AND ($2::timestamptz IS NULL OR created_at >= $2) AND created_at < $3`,
    [since, from, to],
  );
  return rows.map((r) => new Date(`${r.day}T00:00:00Z`));
}

