-- Issue 15: more room on each new page of runs than migration 0014's 10%. A run is inserted small (queued, its
-- input) and grows: the runtime's id, then its output or error, each a new row version (non-HOT: indexed columns
-- change). With 10% kept free most pages filled up after a few of these, and the next version went wherever the
-- free-space map pointed, which at ten million runs was mostly a page ninety days old with room left: at the
-- timeout sweep's terminal write of 2,000 runs inserted just before, 1,489 new versions landed below the pages the
-- runs were inserted on, and the UPDATE took 343 ms (3,100 full-page images, 21 MB of WAL, right after a checkpoint).
-- With 30% kept free: 218–246 ms (2,500–2,700 full-page images, 17–18 MB), none below; with 50%, 201–206 ms.
-- 30% is the middle ground: a run that never grows leaves its page 70% full (50% would double such a heap), one
-- that grows fills it. Only pages written from now on keep the room (instant at any size).
ALTER TABLE runs SET (fillfactor = 70);
