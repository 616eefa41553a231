-- Data lifecycle, opt-in (issue 39 item 4; decisions.md "Data lifecycle"). Without its settings nothing here is
-- ever written: runs, their snapshots and the audit log are kept indefinitely, as the contract says.
--
-- run_day_deleted: the runs ARS_RUN_RETENTION_DAYS deleted, counted per UTC creation day and agent with the status
-- and outputs they had, written by the statement that deletes them. The dashboard's rollup and its reads of runs
-- add these rows (runs/run-rollup.ts), so a day keeps its totals after its runs are gone, and a day recomputed from
-- runs later (a surviving run of it changed) is still whole.
CREATE TABLE run_day_deleted (
  day       date NOT NULL,
  agent_id  bigint NOT NULL,
  queued    int NOT NULL,
  running   int NOT NULL,
  waiting   int NOT NULL,
  completed int NOT NULL,
  failed    int NOT NULL,
  cancelled int NOT NULL,
  outputs   bigint NOT NULL,
  PRIMARY KEY (day, agent_id)
);

-- ARS_RUN_SCRUB_DAYS: when the run's input, output and error were emptied (the row, status and outputs stay).
-- A new nullable column without a default: no rewrite of runs.
ALTER TABLE runs ADD COLUMN scrubbed_at timestamptz;

-- How far the scrub has walked runs_updated_idx: every run at or before (updated_at, id) has been looked at. A
-- scrubbed run keeps its updated_at, so it stays behind the cursor and is never read again; a run changed later
-- moves past it and is looked at again.
CREATE TABLE run_scrub_cursor (
  singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  updated_at  timestamptz NOT NULL,
  id          bigint NOT NULL
);

-- Deleting a run checks the keys that name it (the foreign key): without an index, one scan of the keys per run.
CREATE INDEX idempotency_keys_run_idx ON idempotency_keys (run_id);
