-- Issue 15: runs is the table that grows without bound (spec 2.2: runs are retained indefinitely), and autovacuum's
-- defaults scale with a table (20% of its rows): at ten million runs it would vacuum runs after two million inserts
-- or dead row versions, days apart. Until then the day's new runs sit on pages not marked all-visible, so the
-- dashboard's read of today (an index-only scan of runs_created_idx) fetched every one of them from the heap: 89 ms
-- for 136,000 runs, 54,000 heap fetches. Fixed thresholds keep the visibility map, the free space (fillfactor,
-- migration 0014) and the statistics current at any size, at the cost of a vacuum of the recent pages every
-- 10,000 changes (pages already all-visible are skipped).
ALTER TABLE runs SET (
  autovacuum_vacuum_insert_threshold = 10000, autovacuum_vacuum_insert_scale_factor = 0,
  autovacuum_vacuum_threshold = 10000, autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_analyze_threshold = 10000, autovacuum_analyze_scale_factor = 0.01
);
