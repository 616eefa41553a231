// The dashboard's figures for a period (issue 14, issue 15 at ten million runs): runs per status and outputs per UTC
// creation day, and per agent over the whole period, in one statement whose work grows with days plus agents. Whole
// closed days come from the rollup (run-rollup.ts): per day from the organizations' rows (or the agent's), per agent
// from the aligned spans covering them; the rest — partial days at either end, runs created since the last refresh,
// closed days with a run changed since it — is aggregated from runs a day at a time and counted in both. A partial
// closed day at an end may instead be taken whole from the rollup less its runs outside the period, when the part
// outside is the shorter.
import type { Db } from '../storage/db.ts';
import { RUN_STATUSES, type RunStatus } from './run-states.ts';
import {
  changedDays, COLUMNS, dayAggregateSql, dayNumber, dayOfNumber, dayStart, dayText, nextDayStart, rollupState, spanCover, sumColumns,
} from './run-rollup.ts';

const DAY_MS = 86_400_000;

export interface RunAggregateFilter {
  /** Runs created at or after `from` and before `to`. */
  from: Date;
  to: Date;
  agentId?: number;
  /** Only agents of these organizations (a filter, or a caller's scope). */
  orgIds?: string[];
}

export type StatusCounts = Record<RunStatus, number>;

/** Runs per status and outputs per UTC creation day, and per agent over the whole period. */
export interface PeriodAggregate {
  byDay: Array<{ day: string; runs: StatusCounts; outputs: number }>;
  byAgent: Array<{ agentId: number; runs: StatusCounts; outputs: number }>;
}

/**
 * The figures for [from, to): whole closed days from the rollup, and the open day's runs created before
 * fresh_through when the period covers them all; every other run read from runs. Without a rollup, every run is
 * read from runs, which is also what the tests compare it with.
 */
export async function aggregatePeriod(db: Db, f: RunAggregateFilter): Promise<PeriodAggregate> {
  const state = await rollupState(db);
  const first = nextDayStart(f.from);
  const end = state ? new Date(Math.min(dayStart(f.to).getTime(), state.closedBefore.getTime())) : first;
  // The open day from the rollup: its rows count the runs created from its start to fresh_through.
  const open = state && f.from <= state.closedBefore && f.to >= state.freshThrough && state.freshThrough > state.closedBefore;
  const params: unknown[] = [];
  const p = (value: unknown): string => `$${params.push(value)}`;
  const agentFilters = [
    ...(f.agentId === undefined ? [] : [`agent_id = ${p(f.agentId)}`]),
    ...(f.orgIds === undefined ? [] : [`agent_id IN (SELECT id FROM agents WHERE org_id = ANY(${p(f.orgIds)}::uuid[]))`]),
  ];
  /** Runs read from runs: day, agent_id, counts. */
  const raw: string[] = [];
  /** Rollup rows counted per day (day, counts) and per agent (agent_id, counts). */
  const perDay: string[] = [];
  const perAgent: string[] = [];
  /** The runs created in [from, to), read from runs one UTC day at a time. */
  const rawDays = (from: Date, to: Date) => {
    for (let d = from; d < to; ) {
      const next = new Date(Math.min(dayStart(d).getTime() + DAY_MS, to.getTime()));
      raw.push(dayAggregateSql(p, d, next, agentFilters));
      d = next;
    }
  };

  const { lo, hi, outside } = state ? trimmedEnds(f, first, end, state.closedBefore) : { lo: first, hi: end, outside: [] };
  if (!state || (lo >= hi && !open)) rawDays(f.from, f.to);
  else {
    const changed = lo < hi ? await changedDays(db, state.freshThrough, lo, hi) : [];
    // Per day: whole days [lo, rolledUntil) but the changed ones, from the organizations' rows unless one agent is asked for.
    const rolledUntil = open ? new Date(state.closedBefore.getTime() + DAY_MS) : hi;
    const days = [
      `day >= ${p(dayText(lo))}::date`,
      `day < ${p(dayText(rolledUntil))}::date`,
      ...(changed.length > 0 ? [`day <> ALL(${p(changed.map(dayText))}::date[])`] : []),
    ];
    if (f.agentId !== undefined) perDay.push(`SELECT day, ${COLUMNS}, outputs FROM run_day_rollup WHERE ${[...days, ...agentFilters].join(' AND ')}`);
    else {
      const orgs = f.orgIds === undefined ? [] : [`org_id = ANY(${p(f.orgIds)}::uuid[])`];
      perDay.push(`SELECT day, ${COLUMNS}, outputs FROM run_day_org_rollup WHERE ${[...days, ...orgs].join(' AND ')}`);
    }
    // Per agent: the closed days between the changed ones as aligned spans, and the open day's rows.
    const cover: Array<{ start: number; span: number }> = [];
    let from = dayNumber(lo);
    for (const c of [...changed.map(dayNumber), dayNumber(hi)].sort((x, y) => x - y)) {
      cover.push(...spanCover(from, c));
      from = c + 1;
    }
    const singles = cover.filter((s) => s.span === 1).map((s) => dayOfNumber(s.start));
    if (open) singles.push(dayText(state.closedBefore));
    const spans = cover.filter((s) => s.span > 1);
    if (singles.length > 0) {
      perAgent.push(`SELECT agent_id, ${COLUMNS}, outputs FROM run_day_rollup WHERE ${[`day = ANY(${p(singles)}::date[])`, ...agentFilters].join(' AND ')}`);
    }
    if (spans.length > 0) {
      const which = `(span, start_day) IN (SELECT * FROM unnest(${p(spans.map((s) => s.span))}::int[], ${p(spans.map((s) => dayOfNumber(s.start)))}::date[]))`;
      perAgent.push(`SELECT agent_id, ${COLUMNS}, outputs FROM run_span_rollup WHERE ${[which, ...agentFilters].join(' AND ')}`);
    }
    // A changed day is read from runs, for the part of it the period holds (all of it, unless it is a trimmed end).
    const isChanged = new Set(changed.map((d) => d.getTime()));
    for (const d of changed) rawDays(new Date(Math.max(d.getTime(), f.from.getTime())), new Date(Math.min(d.getTime() + DAY_MS, f.to.getTime())));
    for (const [a, b] of outside) if (!isChanged.has(dayStart(a).getTime())) raw.push(negated(dayAggregateSql(p, a, b, agentFilters)));
    if (lo.getTime() === first.getTime()) rawDays(f.from, first);
    if (open) rawDays(state.freshThrough, f.to);
    else if (hi.getTime() === end.getTime()) rawDays(end, f.to);
  }
  if (raw.length > 0) {
    perDay.push(`SELECT day, ${COLUMNS}, outputs FROM raw`);
    perAgent.push(`SELECT agent_id, ${COLUMNS}, outputs FROM raw`);
  }
  const union = (parts: string[]) => parts.map((part) => `(${part})`).join(' UNION ALL ');
  const { rows } = await db.query<Record<RunStatus, string> & { day: string | null; agent_id: string | null; outputs: string }>(
    `${raw.length > 0 ? `WITH raw AS (${union(raw)}) ` : ''}
     SELECT to_char(day, 'YYYY-MM-DD') AS day, NULL::bigint AS agent_id, ${sumColumns('bigint')}
     FROM (${union(perDay)}) d GROUP BY day HAVING ${someRun}
     UNION ALL
     SELECT NULL, agent_id, ${sumColumns('bigint')} FROM (${union(perAgent)}) a GROUP BY agent_id HAVING ${someRun}`,
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

/**
 * The whole closed days to take from the rollup, [lo, hi): [first, end) widened by a partial closed day at either
 * end of the period when the part of that day outside the period (`outside`, subtracted) is the shorter one, so at
 * most half a day is read from runs for each end (issue 15: the 90-day dashboard's first day, ~100,000 runs at ten
 * million, was 40 ms of its 53). A day counts as closed when it ends by `closedBefore`.
 */
export function trimmedEnds(f: Pick<RunAggregateFilter, 'from' | 'to'>, first: Date, end: Date, closedBefore: Date): { lo: Date; hi: Date; outside: Array<[Date, Date]> } {
  const trimmed = { lo: first, hi: end, outside: [] as Array<[Date, Date]> };
  if (first > end) return trimmed; // the period ends on its first day, or that day is still open
  // Each test below is false for a day the period starts or ends exactly on (nothing of it lies outside).
  const firstDay = dayStart(f.from);
  if (f.from.getTime() - firstDay.getTime() < first.getTime() - f.from.getTime()) {
    trimmed.lo = firstDay;
    trimmed.outside.push([firstDay, f.from]);
  }
  const lastEnd = new Date(dayStart(f.to).getTime() + DAY_MS);
  if (lastEnd <= closedBefore && lastEnd.getTime() - f.to.getTime() < f.to.getTime() - end.getTime()) {
    trimmed.hi = lastEnd;
    trimmed.outside.push([f.to, lastEnd]);
  }
  return trimmed;
}

/** Rollup rows counted negatively: runs of a rolled-up day that fall outside the period. */
function negated(sql: string): string {
  return `SELECT day, agent_id, ${RUN_STATUSES.map((st) => `-${st} AS ${st}`).join(', ')}, -outputs AS outputs FROM (${sql}) x`;
}

/** A group with no run left once the runs outside the period are subtracted is not in the answer. */
const someRun = `(${RUN_STATUSES.map((st) => `sum(${st})`).join(' + ')}) > 0`;
