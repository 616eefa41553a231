-- OAuth refresh claims (decisions.md "Bounded waits"): an instance about to call a provider first claims the
-- connection for a short lease, so instances refresh a connection once without holding a row lock (and a pooled
-- connection) through the provider call. A crashed claimant's lease simply runs out.
ALTER TABLE connections ADD COLUMN refresh_lease uuid, ADD COLUMN refresh_lease_until timestamptz;
