// The trace context each run was started in (migration 0020; tracing/spans.ts): stored when there is one, read by
// the run's later work so that it joins the same trace.
import type { Queryable } from '../storage/db.ts';
import type { TransitionPath } from '../metrics/metrics.ts';
import { recordInRunTrace, tracesExported } from '../tracing/spans.ts';
import type { RunRow } from './runs-repo.ts';

export async function saveRunTrace(q: Queryable, runId: number, traceparent: string): Promise<void> {
  await q.query('INSERT INTO run_traces (run_id, traceparent) VALUES ($1, $2) ON CONFLICT (run_id) DO NOTHING', [runId, traceparent]);
}

export async function runTraceparent(q: Queryable, runId: number): Promise<string | null> {
  const { rows } = await q.query<{ traceparent: string }>('SELECT traceparent FROM run_traces WHERE run_id = $1', [runId]);
  return rows[0]?.traceparent ?? null;
}

/**
 * A status change, recorded in the trace the run was started in while spans are exported (a callback, a poll or an
 * alert made it; the span links to that work's own trace). Costs nothing otherwise.
 */
export async function traceStatusChange(q: Queryable, run: Pick<RunRow, 'id' | 'agent_id' | 'status'>, via: TransitionPath): Promise<void> {
  if (!tracesExported()) return;
  const traceparent = await runTraceparent(q, run.id);
  recordInRunTrace(`run ${run.status}`, traceparent, { 'ars.run_id': run.id, 'ars.agent_id': run.agent_id, 'ars.run.status': run.status, 'ars.run.via': via });
}
