-- Issue 15: runs is the table that grows without bound (spec 2.2: runs are retained indefinitely), and autovacuum's
-- defaults scale with a table (20% of its rows): at ten million runs it would vacuum runs after two million inserts
-- or dead row versions, days apart. Until then the day's new runs sit on pages not marked all-visible, so the
-- dashboard's read of today (an index-only scan of runs_created_idx) fetched every one of them from the heap: 89 ms
-- for 136,000 runs, 54,000 heap fetches. A vacuum every 10,000 inserts keeps the visibility map (and the free space
-- that fillfactor, migration 0014, leaves) current at any size; it reads only pages not yet all-visible, and skips
-- the indexes while few pages hold dead rows (PostgreSQL 14+). Dead rows and statistics: 1% of the table (100,000
-- at ten million runs), not 20% and 10%; ANALYZE samples the whole table, so not every 10,000.
ALTER TABLE runs SET (
  autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.01
);
