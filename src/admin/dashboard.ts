// The console's dashboard (issue 14): runs by status per UTC day and outputs per agent per day (spec 2.2: outputs
// are "used for billing, dashboards and ROI metrics"), with totals, for a bounded period — from one SQL aggregate,
// never by paging runs. Runs are counted on the day they were created, and so are their outputs. Closed days come
// from the rollup (runs/run-rollup.ts), exactly as the runs table would give them.
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { RUN_STATUSES, type RunStatus } from '../runs/run-states.ts';
import { aggregateRunsByDayFast } from '../runs/run-rollup.ts';
import { parseTimestamp, TIMESTAMP_RULE } from '../lib/timestamps.ts';
import type { OrgScope } from './lists.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_PERIOD_DAYS = 30;
/** A year and a leap day: long enough for a yearly report, short enough to stay one quick aggregate. */
export const MAX_PERIOD_DAYS = 366;

export interface DashboardQuery {
  from?: string;
  to?: string;
  orgId?: string;
  agentId?: number;
  scope?: OrgScope;
}

export interface Dashboard {
  from: string;
  to: string;
  runs_by_status: Array<{ day: string; status: RunStatus; count: number }>;
  outputs_by_agent: Array<{ day: string; agentId: number; outputs: number }>;
  totals: { runs: number; outputs: number; by_status: Record<RunStatus, number> };
}

export async function dashboard(ctx: AppContext, q: DashboardQuery): Promise<Dashboard> {
  const { from, to } = period(ctx.clock.now(), q.from, q.to);
  const orgId = q.orgId?.toLowerCase();
  const orgIds = q.scope ? q.scope.orgIds.filter((id) => orgId === undefined || id === orgId) : orgId === undefined ? undefined : [orgId];
  const rows = await aggregateRunsByDayFast(ctx.db, { from, to, agentId: q.agentId, orgIds });

  const byDayStatus = new Map<string, { day: string; status: RunStatus; count: number }>();
  const byDayAgent = new Map<string, { day: string; agentId: number; outputs: number }>();
  const totals = { runs: 0, outputs: 0, by_status: Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number> };
  for (const r of rows) {
    const [runs, outputs, agentId] = [Number(r.runs), Number(r.outputs), Number(r.agent_id)];
    const s = byDayStatus.get(`${r.day}/${r.status}`) ?? { day: r.day, status: r.status, count: 0 };
    s.count += runs;
    byDayStatus.set(`${r.day}/${r.status}`, s);
    const a = byDayAgent.get(`${r.day}/${agentId}`) ?? { day: r.day, agentId, outputs: 0 };
    a.outputs += outputs;
    byDayAgent.set(`${r.day}/${agentId}`, a);
    totals.runs += runs;
    totals.outputs += outputs;
    totals.by_status[r.status] += runs;
  }
  // Rows arrive ordered by day, agent, status: both maps keep day order; within a day, order by status and agent.
  const runsByStatus = [...byDayStatus.values()].sort((x, y) => x.day.localeCompare(y.day) || x.status.localeCompare(y.status));
  return { from: from.toISOString(), to: to.toISOString(), runs_by_status: runsByStatus, outputs_by_agent: [...byDayAgent.values()], totals };
}

/** [from, to): both given, or the last 30 days up to `to` (default now); at most 366 days; from before to. */
function period(now: Date, fromText: string | undefined, toText: string | undefined): { from: Date; to: Date } {
  const to = toText === undefined ? now : parseTimestamp(toText);
  if (!to) throw errors.invalid('querystring.to', TIMESTAMP_RULE);
  const from = fromText === undefined ? new Date(to.getTime() - DEFAULT_PERIOD_DAYS * DAY_MS) : parseTimestamp(fromText);
  if (!from) throw errors.invalid('querystring.from', TIMESTAMP_RULE);
  if (from.getTime() >= to.getTime()) throw errors.invalid('querystring.from', 'must be before to');
  if (to.getTime() - from.getTime() > MAX_PERIOD_DAYS * DAY_MS) throw errors.invalid('querystring.from', `must be at most ${MAX_PERIOD_DAYS} days before to`);
  return { from, to };
}
