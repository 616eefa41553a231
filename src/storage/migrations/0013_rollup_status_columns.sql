-- Issue 15: the dashboard at thousands of agents. One rollup row per UTC creation day and agent, with a count
-- column per status, instead of one row per day, agent and status: a 90-day dashboard at 2,000 agents reads 180,000
-- narrow rows instead of half a million. The counts are int (a day of one agent's runs), so PostgreSQL sums them as
-- bigint; sums of bigint columns are numeric, several times slower. Emptied here: the next refresh rebuilds it from
-- runs (until then the dashboard reads runs, exactly and slowly).
DROP TABLE run_day_rollup;
DELETE FROM run_rollup_state;
CREATE TABLE run_day_rollup (
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
-- One agent's or one organization's days (the dashboard's agent_id and org_id filters, a member's scope): the primary
-- key leads with the day, so without this each agent would scan the period's rows of every agent.
CREATE INDEX run_day_rollup_agent_idx ON run_day_rollup (agent_id, day);
