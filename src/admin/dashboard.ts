// The console's dashboard (issue 14): runs by status per UTC day, outputs per day, and runs and outputs per agent
// over the period (spec 2.2: outputs are "used for billing, dashboards and ROI metrics"), with totals — from one SQL
// aggregate, never by paging runs. Runs are counted on the day they were created, and so are their outputs; one
// agent's outputs per day are the `agent_id` filter's outputs_by_day. The answer grows with days plus agents, never
// with their product (issue 15: 62,000 agent-day entries at 2,000 agents took half a second). Closed days come from
// the rollup (runs/run-rollup.ts), exactly as the runs table would give them.
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import { RUN_STATUSES, type RunStatus } from '../runs/run-states.ts';
import { aggregatePeriod, type StatusCounts } from '../runs/run-aggregate.ts';
import { parseTimestamp, TIMESTAMP_RULE } from '../lib/timestamps.ts';
import type { OrgScope } from './lists.ts';

const DAY_MS = 86_400_000;
export const DEFAULT_PERIOD_DAYS = 30;
/** A year and a leap day: long enough for a yearly report, short enough to stay one quick aggregate. */
export const MAX_PERIOD_DAYS = 366;
const STATUSES_ALPHABETICAL = [...RUN_STATUSES].sort();

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
  outputs_by_day: Array<{ day: string; outputs: number }>;
  /** Every agent with a run in the period: most outputs first, then most runs, then agent id. */
  by_agent: Array<{ agentId: number; runs: number; outputs: number }>;
  totals: { runs: number; outputs: number; by_status: Record<RunStatus, number> };
}

export async function dashboard(ctx: AppContext, q: DashboardQuery): Promise<Dashboard> {
  const { from, to } = period(ctx.clock.now(), q.from, q.to);
  const orgId = q.orgId?.toLowerCase();
  const orgIds = q.scope ? q.scope.orgIds.filter((id) => orgId === undefined || id === orgId) : orgId === undefined ? undefined : [orgId];
  const { byDay, byAgent } = await aggregatePeriod(ctx.db, { from, to, agentId: q.agentId, orgIds });

  const totals = { runs: 0, outputs: 0, by_status: Object.fromEntries(RUN_STATUSES.map((s) => [s, 0])) as Record<RunStatus, number> };
  const runsByStatus: Dashboard['runs_by_status'] = [];
  // Days come from GROUP BY: in day order here, statuses alphabetical within a day.
  byDay.sort((x, y) => x.day.localeCompare(y.day));
  for (const d of byDay) {
    for (const status of STATUSES_ALPHABETICAL) {
      if (d.runs[status] > 0) runsByStatus.push({ day: d.day, status, count: d.runs[status] });
      totals.by_status[status] += d.runs[status];
      totals.runs += d.runs[status];
    }
    totals.outputs += d.outputs;
  }
  const runsOf = (c: StatusCounts) => RUN_STATUSES.reduce((n, s) => n + c[s], 0);
  const agents = byAgent.map((a) => ({ agentId: a.agentId, runs: runsOf(a.runs), outputs: a.outputs }));
  return {
    from: from.toISOString(),
    to: to.toISOString(),
    runs_by_status: runsByStatus,
    outputs_by_day: byDay.map((d) => ({ day: d.day, outputs: d.outputs })),
    by_agent: agents.sort((x, y) => y.outputs - x.outputs || y.runs - x.runs || x.agentId - y.agentId),
    totals,
  };
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
