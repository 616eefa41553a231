-- Issue 15: a write that changes an indexed column of a run (every status write, every output report, the
-- trigger's record of the runtime's id) puts a new entry in each of the runs table's indexes. Most of them take
-- that entry where the last one went (ids, timestamps, a status's newest ids); the ones that lead with an agent or
-- with the runtime's id take it at a random place, and at ten million runs that place is a page out of memory and,
-- the first time after each checkpoint, a full-page image in the WAL: updating 400 running runs after a checkpoint
-- wrote 1,800 full-page images (11.5 MB, 93 ms) with four such indexes, 970 (6.2 MB, 70 ms) with two.
--
-- runs_external_idx (external_run_id, id DESC) and the unique key (agent_id, external_run_id) are one index now:
-- the key turned around, so that a look-up by the runtime's id alone (the runs list's filter, an event naming a
-- run) reads it too, and partial, so that a run not yet triggered (external_run_id still null) has no entry.
-- runs_agent_idx (agent_id, id DESC) goes: an agent's runs newest first are read from runs_agent_status_idx, one
-- range per status merged by id (runs-repo.ts listRuns). Foreign-key checks on agents use that index as well.
--
-- Building the unique index holds writes to runs for its duration (about a minute per ten million runs here).
CREATE UNIQUE INDEX runs_external_agent_key ON runs (external_run_id, agent_id) WHERE external_run_id IS NOT NULL;
ALTER TABLE runs DROP CONSTRAINT runs_agent_external_key;
DROP INDEX runs_external_idx;
DROP INDEX runs_agent_idx;
