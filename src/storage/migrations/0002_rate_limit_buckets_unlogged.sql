-- Rate-limit counters live for a minute and are worth nothing after a crash: a lost minute only lets its callers
-- in again early, as the limiter's fail-open would. So they are written without WAL, which makes the write every
-- limited request carries cheaper. (Unlogged tables are not replicated: a failover resets the current minute.)
ALTER TABLE rate_limit_buckets SET UNLOGGED;
