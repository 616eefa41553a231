-- Idempotency-Key on the run-starting endpoints (issue 13; decisions.md "Idempotency keys"). A key is claimed by
-- the very statement that inserts its run (a CTE of the run's INSERT), so there is never a key without its run nor a
-- keyed run without its key, and of concurrent requests with one key exactly one inserts (the primary key decides).
-- The claiming request's answer is stored once it is known: its status and its JSON text, kept as text so that a
-- replay sends the very bytes the first caller got (jsonb would reorder keys). After expires_at the key may be
-- claimed again; the retention job deletes such rows.
CREATE TABLE idempotency_keys (
  agent_id      bigint NOT NULL REFERENCES agents (id),
  key           text NOT NULL CHECK (char_length(key) BETWEEN 1 AND 255),
  endpoint      text NOT NULL,
  fingerprint   text NOT NULL,
  run_id        bigint NOT NULL REFERENCES runs (id),
  status_code   smallint,
  response_body text,
  created_at    timestamptz NOT NULL,
  expires_at    timestamptz NOT NULL,
  CONSTRAINT idempotency_keys_pkey PRIMARY KEY (agent_id, key),
  CHECK ((status_code IS NULL) = (response_body IS NULL))
);
CREATE INDEX idempotency_keys_expires_idx ON idempotency_keys (expires_at);
