-- The run timeline (issue 14, run detail): one row per status a run entered, written by the same statement that
-- writes the status, with the path that wrote it — the run's source for its first status, then callback, poll,
-- alert, sync, start, timeout, admin, ingest, waitpoint or recovery. Only applied writes leave a row, so the
-- winner of a race between a callback, a poll and an alert is on record. Runs created before this migration
-- have no rows.
CREATE TABLE run_transitions (
  id      bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  run_id  bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
  status  text NOT NULL,
  via     text NOT NULL,
  at      timestamptz NOT NULL
);
CREATE INDEX run_transitions_run_idx ON run_transitions (run_id, id);
