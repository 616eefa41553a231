-- Recovery of runs whose runtime call this service lost (a crash, a restart, an instance that died).
--
-- invoke_lease_until: while a live instance holds a runtime call for the run (n8n's held webhook call, a file
-- stream, a task trigger in flight) it keeps this in the future. Once it lapses on a run that is still active,
-- nobody is holding the call any more, and the recovery sweep looks the run up at its runtime. Runs that were
-- never started by this service (ingest, /register) never have one.
ALTER TABLE runs ADD COLUMN invoke_lease_until timestamptz;
CREATE INDEX runs_invoke_lease_idx ON runs (invoke_lease_until)
  WHERE invoke_lease_until IS NOT NULL AND status IN ('queued', 'running', 'waiting');

-- What the service could not do at the runtime for this run, in a sentence for the admin run detail: a run
-- finished from the runtime's records after its held call was lost, a cancel the runtime could not carry out.
ALTER TABLE runs ADD COLUMN runtime_note text CHECK (char_length(runtime_note) <= 1000);

-- One row: this deployment's identity. It travels in every task payload so that two deployments sharing one
-- runtime never adopt each other's executions when they look a lost run up there. A copy of the database
-- restored as a second deployment should get a new one: UPDATE service_identity SET deployment_id = gen_random_uuid()::text.
CREATE TABLE service_identity (
  singleton      boolean PRIMARY KEY DEFAULT true CHECK (singleton),
  deployment_id  text NOT NULL,
  created_at     timestamptz NOT NULL DEFAULT now()
);
INSERT INTO service_identity (deployment_id) VALUES (gen_random_uuid()::text);
