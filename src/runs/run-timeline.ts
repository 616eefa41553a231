// The run timeline (decisions.md "The run timeline"): every status a run entered and the path that wrote it, in
// `run_transitions`. Rows are written only inside the statements that write a status — the run insert (here, its
// first status) and run-transitions.ts — so an entry exists exactly when the status was written. One entry is
// implied instead of stored: the first of a run this service starts, which is always `queued`, via the run's
// source, at its creation — the run row says all three, and not writing it is a row and two index entries less
// on /trigger's insert (decisions.md).
import type { Queryable } from '../storage/db.ts';
import type { RunStatus } from './run-states.ts';
import type { RunRow } from './runs-repo.ts';
import { isStartedSource } from './run-sources.ts';

/** Whether a run inserted with this status and source leaves its first entry implied rather than stored. */
export function isFirstStatusImplied(status: RunStatus, source: string): boolean {
  return status === 'queued' && isStartedSource(source);
}

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

/**
 * The run's timeline, oldest first, from its stored rows and the run row the caller has already read. A started
 * run's first entry is implied unless a row stored it: a run inserted before the entry was implied has its stored
 * first row (`queued`, via its source), and no later transition is ever written via a source's name. Runs older
 * than the timeline itself have no rows and get the implied entry, which is what they did. A run of such a source
 * inserted in another status (test fixtures) stored its first entry.
 */
export async function listTransitions(q: Queryable, run: Pick<RunRow, 'id' | 'source' | 'created_at'>): Promise<TimelineEntry[]> {
  const { rows } = await q.query<TimelineEntry>('SELECT status, via, at FROM run_transitions WHERE run_id = $1 ORDER BY id', [run.id]);
  if (!isStartedSource(run.source) || rows[0]?.via === run.source) return rows;
  return [{ status: 'queued', via: run.source, at: run.created_at }, ...rows];
}

/** The replays of a run (issue 14: admin replay), oldest first; served by runs_replay_of_idx. */
export async function listReplays(q: Queryable, runId: number): Promise<number[]> {
  const { rows } = await q.query<{ id: number }>('SELECT id FROM runs WHERE replay_of = $1 ORDER BY id', [runId]);
  return rows.map((r) => Number(r.id));
}
