-- The console, live and at scale (issue 14; decisions.md "Live runs and the console at one million runs").
--
-- The live feed's catch-up and the dashboard rollup's sweep find recently changed runs by updated_at. Every status
-- write and every output report sets updated_at, so indexing it costs those writes their HOT update (a status
-- change already paid it: runs_status_idx); the bench's throughput scenario measures it.
CREATE INDEX runs_updated_idx ON runs (updated_at, id);

-- The runs list's filters, newest first (ORDER BY id DESC). Agent and status together: a rare status of a busy
-- agent would otherwise scan the agent's runs until a page is found. External ids and creators are looked up
-- across agents; most runs have no creator, so that index is partial. Source has a handful of values and is not
-- indexed: a newest-first scan finds a page quickly unless the source is rare (decisions.md).
CREATE INDEX runs_agent_status_idx ON runs (agent_id, status, id DESC);
CREATE INDEX runs_external_idx ON runs (external_run_id, id DESC) WHERE external_run_id IS NOT NULL;
CREATE INDEX runs_created_by_idx ON runs (created_by, id DESC) WHERE created_by IS NOT NULL;

-- The dashboard's closed days: runs and outputs per UTC creation day, agent and current status, as the raw
-- aggregate (run-aggregates.ts) would count them. Refreshed by a background sweep (run-rollup.ts), never by the
-- write path (one row per agent and day would serialize every concurrent write of that agent).
CREATE TABLE run_day_rollup (
  day      date NOT NULL,
  agent_id bigint NOT NULL,
  status   text NOT NULL,
  runs     bigint NOT NULL,
  outputs  bigint NOT NULL,
  PRIMARY KEY (day, agent_id, status)
);

-- One row: the rollup holds every day before `closed_before`, exact for every run whose updated_at is at or before
-- `fresh_through`. A day with a run updated later is read from the runs table until the next sweep refreshes it.
CREATE TABLE run_rollup_state (
  singleton     boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  closed_before date NOT NULL,
  fresh_through timestamptz NOT NULL
);
