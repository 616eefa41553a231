-- The running-timeout sweep at scale (issue 15; decisions.md "Scale (issue 15)"): it reads running runs in
-- started_at order up to the shortest agent timeout (run-transitions.ts failRunningTimedOut). Only running runs are
-- in this index, so it stays as small as the number of runs in flight, whatever the size of the table.
CREATE INDEX runs_running_started_idx ON runs (started_at) WHERE status = 'running';
