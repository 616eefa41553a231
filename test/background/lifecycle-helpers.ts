// Runs at test size for the data-lifecycle tests (issue 39 item 4): thousands, through SQL in a few statements,
// with what names a run (a timeline entry each, outbox rows, live Idempotency-Keys) and data to scrub.
import type { TestApp } from '../helpers/test-app.ts';

export const HOUR = 3_600_000;
export const DAY = 24 * HOUR;

/**
 * `runs` runs evenly over `days` days from `from`, round-robin over `agentIds`. By n = 1… : n % 10 = 0 waiting,
 * 3 running (both active), 1 failed, 2 cancelled, the rest completed with n % 7 outputs; a terminal run finishes
 * n % 50 hours after its creation (no later than an hour before `now`), so a day's runs finish on both sides of a
 * cutoff. Every 20th run has a delivered outbox row, every 25th a key that expires a day after `now`.
 */
export async function bulkRuns(t: TestApp, agentIds: number[], o: { from: Date; days: number; runs: number; now: Date }): Promise<void> {
  const stepMs = (o.days * DAY) / o.runs;
  await t.db.query(
    `WITH g AS (
       SELECT n, $1::timestamptz + (n - 1) * $2::float8 * interval '1 millisecond' AS created_at,
         CASE n % 10 WHEN 0 THEN 'waiting' WHEN 3 THEN 'running' WHEN 1 THEN 'failed' WHEN 2 THEN 'cancelled' ELSE 'completed' END AS status,
         ($3::bigint[])[1 + n % cardinality($3::bigint[])] AS agent_id
       FROM generate_series(1, $4::int) AS n
     ), r AS (
       SELECT g.*, CASE WHEN status IN ('waiting', 'running') THEN NULL
         ELSE least(created_at + (n % 50) * interval '1 hour', $5::timestamptz - interval '1 hour') END AS completed_at
       FROM g
     )
     INSERT INTO runs (agent_id, status, source, input, output_data, outputs, error, wait_state, created_at, started_at, completed_at, updated_at)
     SELECT agent_id, status, 'trigger', jsonb_build_object('question', 'personal ' || n),
       CASE WHEN status = 'completed' THEN jsonb_build_object('answer', 'private ' || n) END,
       CASE WHEN status = 'completed' THEN n % 7 ELSE 0 END,
       CASE WHEN status = 'failed' THEN to_jsonb('failed for user ' || n) END,
       CASE WHEN status = 'waiting' THEN jsonb_build_object('tokenId', 't' || n, 'description', 'd', 'url', NULL, 'output', jsonb_build_object('draft', n)) END,
       created_at, created_at, completed_at, coalesce(completed_at, created_at)
     FROM r ORDER BY n`,
    [o.from, stepMs, agentIds, o.runs, o.now],
  );
  await t.db.query(
    `INSERT INTO run_transitions (run_id, status, via, at) SELECT id, status, 'admin', updated_at FROM runs WHERE created_at >= $1`,
    [o.from],
  );
  await t.db.query(
    `INSERT INTO outbox (run_id, event, message_id, snapshot, delivered_at, created_at, next_attempt_at)
     SELECT id, status, 'msg-' || id, to_jsonb(runs), updated_at, updated_at, updated_at FROM runs
     WHERE created_at >= $1 AND status = 'completed' AND id % 20 = 4`,
    [o.from],
  );
  await t.db.query(
    `INSERT INTO idempotency_keys (agent_id, key, endpoint, fingerprint, run_id, created_at, expires_at)
     SELECT agent_id, 'key-' || id, 'trigger', 'f', id, created_at, $2::timestamptz + interval '1 day' FROM runs
     WHERE created_at >= $1 AND id % 25 = 5`,
    [o.from, o.now],
  );
}
