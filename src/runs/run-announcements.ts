// What every status write announces, in the same statement (run-transitions.ts): its outbox events, its timeline
// entry and its NOTIFY on RUN_EVENTS_CHANNEL — and the NOTIFY payload's format, read by the listeners (run-watch.ts,
// the outbox worker, the live feed).
import type { RunStatus } from './run-states.ts';
import type { RunRow } from './runs-repo.ts';

export const RUN_EVENTS_CHANNEL = 'ars_run';

/**
 * What every status write announces about the row `t` it returns, at `now`: a CTE queuing one outbox row per
 * webhook action subscribed to the new status (the message id makes a repeat a no-op; a new `waiting` token is a
 * new message), and a select-list item that NOTIFYs — only for the statuses someone listens for: terminal ones
 * (sync waits, held calls, streams) and `waiting` (outbox nudge). A NOTIFY takes a commit-time lock on PostgreSQL,
 * so sending one on every intermediate output cut callback throughput severalfold (bench).
 *
 * The payload is `id:status`; a terminal one also carries the row as written (`id:status:{json}`) when it fits in
 * a notification, so a wait woken on another instance answers without reading the row back (issue 15: that read
 * was a third of the cross-instance wake). The size check on the stored jsonb columns comes first, so a run with a
 * large output costs no serialization that would only be thrown away; such a run is announced by status alone.
 */
export function announced(t: string, now: string, via: string, changed = 'true'): { cte: string; notify: string } {
  return {
    cte: `timeline AS (
       INSERT INTO run_transitions (run_id, status, via, at) SELECT ${t}.id, ${t}.status, ${via}, ${now} FROM ${t} WHERE ${changed}
     ),
     queued_events AS (
       INSERT INTO outbox (webhook_action_id, run_id, event, message_id, snapshot, next_attempt_at)
       SELECT wa.id, ${t}.id, ${t}.status, 'msg_' || ${t}.id || '_' || ${t}.status || '_' || wa.id
              || CASE WHEN ${t}.status = 'waiting' THEN '_' || md5(coalesce(${t}.wait_state->>'tokenId', '')) ELSE '' END,
              to_jsonb(${t}), ${now}
       FROM ${t} JOIN webhook_actions wa ON wa.agent_id = ${t}.agent_id AND wa.on_state = ${t}.status
       ON CONFLICT (message_id) DO NOTHING
     )`,
    notify: `CASE WHEN ${t}.status IN ('completed', 'failed', 'cancelled', 'waiting') THEN pg_notify('${RUN_EVENTS_CHANNEL}', ${t}.id || ':' || ${t}.status || ${notifiedRow(t)}) END AS notified`,
  };
}

/** PostgreSQL refuses a NOTIFY payload of 8000 bytes or more; the id and status come before the row. */
const MAX_NOTIFIED_ROW_BYTES = 7_900;
/** Stored (possibly compressed) size of the jsonb columns above which the row is not even serialized. */
const NOTIFIED_JSONB_BUDGET = 6_000;

/** `:` and the row `t` as JSON for a terminal status when it fits in a notification, else ''. */
function notifiedRow(t: string): string {
  const jsonbSize = ['input', 'metadata', 'output_data', 'error', 'wait_state'].map((c) => `coalesce(pg_column_size(${t}.${c}), 0)`).join(' + ');
  return `CASE WHEN ${t}.status <> 'waiting' AND ${jsonbSize} < ${NOTIFIED_JSONB_BUDGET}
    THEN coalesce((SELECT ':' || r.j FROM (SELECT (to_jsonb(${t}) - 'prior_status')::text AS j) r WHERE octet_length(r.j) <= ${MAX_NOTIFIED_ROW_BYTES}), '')
    ELSE '' END`;
}

/** A notification on RUN_EVENTS_CHANNEL: the run, its new status and, when it was carried, the row's JSON (unparsed). */
export interface RunNotification {
  runId: number;
  status: RunStatus;
  rowJson: string | null;
}

export function parseRunNotification(payload: string): RunNotification {
  const first = payload.indexOf(':');
  const second = payload.indexOf(':', first + 1);
  return {
    runId: Number(payload.slice(0, first)),
    status: payload.slice(first + 1, second < 0 ? undefined : second) as RunStatus,
    rowJson: second < 0 ? null : payload.slice(second + 1),
  };
}

/** Timestamp columns of `runs`: JSON has them as ISO strings, the driver as Dates. */
const TIMESTAMP_COLUMNS = ['created_at', 'updated_at', 'started_at', 'completed_at', 'next_poll_at', 'invoke_lease_until'];

/**
 * The row a notification carried, as findRun() would have returned it (same keys, Dates for timestamps, numbers
 * for bigints, parsed jsonb); null if it cannot be read as one (the listener then reads the row itself).
 */
export function rowFromNotification(rowJson: string): RunRow | null {
  let row: Record<string, unknown>;
  try {
    row = JSON.parse(rowJson) as Record<string, unknown>;
  } catch {
    return null;
  }
  if (typeof row !== 'object' || row === null || typeof row.id !== 'number' || typeof row.status !== 'string') return null;
  for (const c of TIMESTAMP_COLUMNS) {
    const v = row[c];
    if (typeof v === 'string') row[c] = new Date(v);
  }
  return row as unknown as RunRow;
}

