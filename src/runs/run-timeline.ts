// The run timeline (decisions.md "The run timeline"): every status a run entered and the path that wrote it, in
// `run_transitions`. Rows are written only inside the statements that write a status — the run insert (here, its
// first status) and run-transitions.ts — so an entry exists exactly when the status was written.
import type { Queryable } from '../storage/db.ts';
import type { RunStatus } from './run-states.ts';

/** A new run's first status on its timeline (run-transitions.ts), in the insert's statement; its path is the source. */
export const FIRST_STATUS_ON_TIMELINE = `timeline AS (
  INSERT INTO run_transitions (run_id, status, via, at) SELECT inserted.id, inserted.status, $3::text, $8::timestamptz FROM inserted
)`;

/** One entry of a run's timeline: a status it entered, the path that wrote it, when (run-transitions.ts). */
export interface TimelineEntry {
  status: RunStatus;
  via: string;
  at: Date;
}

/** The run's timeline, oldest first. */
export async function listTransitions(q: Queryable, runId: number): Promise<TimelineEntry[]> {
  const { rows } = await q.query<TimelineEntry>('SELECT status, via, at FROM run_transitions WHERE run_id = $1 ORDER BY id', [runId]);
  return rows;
}

/** The replays of a run (issue 14: admin replay), oldest first; served by runs_replay_of_idx. */
export async function listReplays(q: Queryable, runId: number): Promise<number[]> {
  const { rows } = await q.query<{ id: number }>('SELECT id FROM runs WHERE replay_of = $1 ORDER BY id', [runId]);
  return rows.map((r) => Number(r.id));
}
