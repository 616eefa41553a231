-- Issue 15: background maintenance that should happen once per period across every instance (the first is the
-- daily index vacuum of runs, background/runs-vacuum.ts). An instance claims a pass by moving last_started_at
-- forward in one statement; the others see it already moved and skip.
CREATE TABLE maintenance_passes (
  name text PRIMARY KEY,
  last_started_at timestamptz NOT NULL
);
