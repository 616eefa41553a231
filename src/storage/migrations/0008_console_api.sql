-- The console's admin API (issue 14; decisions.md "Console API (issue 14)").
--
-- Organizations and users have random uuid ids, so their lists page newest first by (created_at, id).
CREATE INDEX organizations_created_idx ON organizations (created_at, id);
CREATE INDEX users_created_idx ON users (created_at, id);

-- Admin replays: a replay is a new run that names the run it starts again; the old run's detail lists its replays.
-- Runs are never deleted, so a plain reference.
ALTER TABLE runs ADD COLUMN replay_of bigint REFERENCES runs (id);
CREATE INDEX runs_replay_of_idx ON runs (replay_of) WHERE replay_of IS NOT NULL;

-- A run's outbound deliveries, for its admin view and redelivery.
CREATE INDEX outbox_run_idx ON outbox (run_id, id);

-- The dashboard's aggregates read one period's runs by creation time; the included columns let them be answered
-- from the index alone. (Status is indexed already, by runs_status_idx, so this costs status writes no HOT update.)
CREATE INDEX runs_created_idx ON runs (created_at) INCLUDE (agent_id, status, outputs);
