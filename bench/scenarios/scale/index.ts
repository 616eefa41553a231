// Issue 15 item 1, "a scale scenario": the service at BENCH_SCALE_RUNS runs (default 10,000,000) beside the same
// service on an empty database of the same run. PostgreSQL only. The scale database is its own
// (ars_bench_scale_<count>, on the bench's or the tests' server), seeded once through SQL in resumable batches and
// kept, so later runs skip the seeding; the empty one has the same organizations, runtimes and agents and no runs,
// and is dropped at the end. Everything runs in this process (createContext + buildApp on each database, app.inject:
// no network), against the bench's runtime fakes:
// - /trigger and /callback: the same requests on both databases, in alternating blocks; ratio = scale / empty;
// - a poll sweep and a timeout sweep: the same number of due runs made due on each database, one pass of the
//   background job's own function (pollDueRuns, sweepTimeouts) timed, cost per due run, ratio = scale / empty;
// - the admin runs list (first page, by agent, by status, both, deep cursors) and the dashboard, through the whole
//   app against the bare SQL they need (the figures of the former "console at 1M runs"), PASS under 100 ms at p95;
// - table and index sizes, as notes.
// One module per part: database.ts (seeding, sizes), side.ts, hot-paths.ts, sweeps.ts, console-figures.ts.
import { randomBytes } from 'node:crypto';
import type { Harness } from '../../harness.ts';
import type { Report } from '../../report.ts';
import { ms } from '../../stats.ts';
import { stopContext } from '../../../src/context.ts';
import { openPostgres } from '../../../src/storage/postgres-db.ts';
import { migrate } from '../../../src/storage/migrate.ts';
import { refreshRollup } from '../../../src/runs/run-rollup.ts';
import { vacuumRunIndexes } from '../../../src/background/runs-vacuum.ts';
import type { Db } from '../../../src/storage/db.ts';
import { adminQuery, ensureDatabase, LABEL, prepareScaleDatabase, seedAgentsSql, sizes, vacuumRuns } from './database.ts';
import { openSide, type Side } from './side.ts';
import { hotPaths } from './hot-paths.ts';
import { sweeps } from './sweeps.ts';
import { consoleFigures } from './console-figures.ts';
import { MAX_RATIO, pctOver } from './targets.ts';

export { SCALE, SCALE_RUNS } from './database.ts';
export { KEYED } from './side.ts';

export async function scale(h: Harness, r: Report): Promise<void> {
  const name = `scale: ${LABEL} runs`;
  const server = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (!server) return r.skipped(name, 'PostgreSQL only: set BENCH_DATABASE_URL or TEST_DATABASE_URL', `within ${pctOver(MAX_RATIO)}`);
  const prepared = await prepareScaleDatabase(server);
  const scaleUrl = prepared.url;
  r.note(`${name}: ${prepared.seeded}`);
  const emptyName = `ars_bench_scale_empty_${randomBytes(3).toString('hex')}`;
  const emptyUrl = await ensureDatabase(server, emptyName);
  const sides: Side[] = [];
  const dbs: Db[] = [];
  try {
    const scaleDb = await openPostgres(scaleUrl, { poolSize: 10 });
    dbs.push(scaleDb);
    const emptyDb = await openPostgres(emptyUrl, { poolSize: 10 });
    dbs.push(emptyDb);
    // The scale database is migrated and seeded (prepareScaleDatabase); the empty one gets the same agents.
    await migrate(emptyDb);
    await seedAgentsSql(emptyDb);
    for (const [side, db] of [['scale', scaleDb], ['empty', emptyDb]] as const) sides.push(await openSide(side, db, h));
    const [big, empty] = sides as [Side, Side];
    // The daily index vacuum (background/runs-vacuum.ts) ran at most a day ago: the writes below are the day's,
    // and the console figures see their dead row versions, not those of every earlier bench run on this database.
    const tv = performance.now();
    await vacuumRunIndexes(big.db);
    r.note(`${name}: the daily index vacuum of runs took ${ms(performance.now() - tv, 0)}`);
    const t0 = performance.now();
    await refreshRollup(big.db, new Date());
    r.note(`${name}: dashboard rollup refresh (the sweep's pass) took ${ms(performance.now() - t0, 0)}`);

    await hotPaths(h, r, big, empty);
    await sweeps(h, r, big, empty);
    // The console as someone finds it a minute after the writes above, which changed tens of thousands of runs in
    // seconds: the background sweep has refreshed the rollup past them (it vouches for changes a minute old), and
    // autovacuum, past its 10,000 changes (migration 0015), has vacuumed runs. Without either, every dashboard read
    // would look the changes up and read today's runs from the heap.
    await new Promise((resolve) => setTimeout(resolve, 61_000));
    const t1 = performance.now();
    await vacuumRuns(scaleUrl);
    const t2 = performance.now();
    await refreshRollup(big.db, new Date());
    r.note(`${name}: a minute after the writes above, VACUUM ANALYZE runs took ${ms(t2 - t1, 0)} and the rollup refresh ${ms(performance.now() - t2, 0)}`);
    await consoleFigures(r, big);
    await sizes(r, big.db);
  } finally {
    for (const s of sides) {
      await s.app.close();
      await stopContext(s.ctx);
    }
    for (const db of dbs) await db.close();
    await adminQuery(server, `DROP DATABASE IF EXISTS ${emptyName} WITH (FORCE)`).catch((err: unknown) => console.error('cleanup failed:', err));
  }
}
