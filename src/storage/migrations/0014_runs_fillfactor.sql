-- Issue 15: status changes at ten million runs. An UPDATE writes the row's new version on the page of the old one
-- when it fits, else wherever the free-space map points: with full pages (the default fillfactor, 100) that was a
-- page of a 14 GB heap read into shared buffers and written whole to the WAL (a full-page image) after each
-- checkpoint. The timeout sweep's UPDATE of 1,800 runs wrote 5.6 MB of WAL with ~510 full-page images; with 10%
-- of each new page kept free, 1.8 MB and none. The same room lets an update that changes no indexed column be HOT.
-- Only pages written from now on keep the room (no rewrite: this is instant at any size).
ALTER TABLE runs SET (fillfactor = 90);
