-- Issue 15: the dashboard at ten million runs and 2,000 agents. run_day_rollup holds one row per day and agent, so
-- a 90-day dashboard read 180,000 rows and folded them twice (by day, by agent): 200–300 ms. Two tables derived from
-- it, refreshed with it (runs/run-rollup.ts), cut what a period reads:
--
-- run_day_org_rollup: one row per day and organization, for runs per day when no agent is asked for (20 rows a day
-- at 20 organizations instead of 2,000). An agent never changes organization, so a day's row is its agents' sum.
CREATE TABLE run_day_org_rollup (
  day       date NOT NULL,
  org_id    uuid NOT NULL,
  queued    int NOT NULL,
  running   int NOT NULL,
  waiting   int NOT NULL,
  completed int NOT NULL,
  failed    int NOT NULL,
  cancelled int NOT NULL,
  outputs   bigint NOT NULL,
  PRIMARY KEY (day, org_id)
);

-- run_span_rollup: one row per agent and aligned span of closed days (2, 4, … 256 days, starting on a day number
-- since 1970-01-01 that the span divides), for runs per agent over a period: any run of whole days is covered by at
-- most two spans of each size, so a 90-day period reads about 8 rows per agent instead of 90. A span is built from
-- its two halves once its last day has closed, and rebuilt when one of its days changes.
CREATE TABLE run_span_rollup (
  span      int NOT NULL,
  start_day date NOT NULL,
  agent_id  bigint NOT NULL,
  queued    int NOT NULL,
  running   int NOT NULL,
  waiting   int NOT NULL,
  completed int NOT NULL,
  failed    int NOT NULL,
  cancelled int NOT NULL,
  outputs   bigint NOT NULL,
  PRIMARY KEY (span, start_day, agent_id)
);

-- The next refresh rebuilds every rollup table from runs (until then the dashboard reads runs, exactly and slowly).
DELETE FROM run_rollup_state;
