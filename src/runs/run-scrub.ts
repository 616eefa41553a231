// Run scrubbing, opt-in (issue 39 item 4; decisions.md "Data lifecycle"): a terminal run unchanged since before a
// cutoff loses its input, output and error (and a leftover wait_state, which holds a waitpoint's output); the row,
// its status, outputs count, timestamps and timeline stay, and scrubbed_at says when. The copies go too: the run
// snapshot an outbox row carries for its webhook body. The figures the dashboard reads (status, outputs) are
// untouched, and so is updated_at: nothing a reader of changes (the live feed, the rollup) cares about changed.
//
// The scrub walks runs_updated_idx from a cursor (run_scrub_cursor, migration 0021) up to the cutoff: a scrubbed run
// keeps its updated_at, so it stays behind the cursor and is never read again; a run still active when the cursor
// passed it moves past the cursor with its next write, and is looked at again once that write is older than the
// cutoff. For a terminal run the cutoff counts from its last write: its completion, or a later output report.
import type { Db } from '../storage/db.ts';
import { TERMINAL_STATUSES } from '../schemas/run-status.ts';

const TERMINAL = TERMINAL_STATUSES.map((s) => `'${s}'`).join(', ');
const SCRUBBED_SNAPSHOT = `jsonb_build_object('input', '{}'::jsonb, 'output_data', NULL, 'error', NULL, 'wait_state', NULL)`;

export interface ScrubBatch {
  /** Runs the cursor moved past (a batch shorter than the limit: the cursor reached the cutoff). */
  read: number;
  scrubbed: number;
}

/** Looks at up to `limit` runs after the cursor last written before `cutoff`; scrubs the terminal ones. */
export async function scrubRunsBefore(db: Db, cutoff: Date, now: Date, limit: number): Promise<ScrubBatch> {
  return db.transaction(async (tx) => {
    // The cursor row, locked: instances scrubbing side by side take turns.
    await tx.query("INSERT INTO run_scrub_cursor (updated_at, id) VALUES ('1970-01-01T00:00:00Z', 0) ON CONFLICT (singleton) DO NOTHING");
    await tx.query('SELECT 1 FROM run_scrub_cursor FOR UPDATE');
    const { rows } = await tx.query<{ id: string; due: boolean }>(
      `SELECT id, status IN (${TERMINAL}) AND scrubbed_at IS NULL AS due FROM runs
       WHERE (updated_at, id) > (SELECT updated_at, id FROM run_scrub_cursor) AND updated_at < $1
       ORDER BY updated_at, id LIMIT $2`,
      [cutoff, limit],
    );
    if (rows.length === 0) return { read: 0, scrubbed: 0 };
    const ids = rows.filter((r) => r.due).map((r) => r.id);
    let scrubbed = 0;
    if (ids.length > 0) {
      // Guarded again on the status: a run read above may have changed since (its write then moved it past the cursor).
      const { rows: done } = await tx.query<{ id: string }>(
        `UPDATE runs SET input = '{}'::jsonb, output_data = NULL, error = NULL, wait_state = NULL, scrubbed_at = $2
         WHERE id = ANY($1::bigint[]) AND status IN (${TERMINAL}) AND updated_at < $3 AND scrubbed_at IS NULL RETURNING id`,
        [ids, now, cutoff],
      );
      scrubbed = done.length;
      if (done.length > 0) {
        await tx.query(`UPDATE outbox SET snapshot = snapshot || ${SCRUBBED_SNAPSHOT} WHERE run_id = ANY($1::bigint[])`, [done.map((r) => r.id)]);
      }
    }
    // The cursor's time is copied in SQL: a JS Date would drop the microseconds and leave the last run ahead of it.
    await tx.query('UPDATE run_scrub_cursor c SET updated_at = r.updated_at, id = r.id FROM runs r WHERE r.id = $1', [rows[rows.length - 1]!.id]);
    return { read: rows.length, scrubbed };
  });
}
