-- Issue 39 item 2: the W3C trace context a run was started in (the caller's, or the service's own request span
-- while traces are exported), so the run's later work — its status changes, its webhook deliveries — joins that
-- trace. A table of its own, written only for a run started with a context: runs and their hot writes stay as they
-- were when nobody traces. Deleted with its run.
CREATE TABLE run_traces (
  run_id bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
  traceparent text NOT NULL
);
