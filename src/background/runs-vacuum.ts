// The daily index vacuum of runs (issue 15; decisions.md "Scale"). Every non-HOT update of a run (its trigger, each
// output report, its terminal write) leaves the old version's line pointer dead on its page, and that page cannot be
// marked all-visible until the indexes' entries for it are gone. Autovacuum leaves them while fewer than 2% of the
// table's pages hold such pointers (PostgreSQL 14+, a fixed threshold), which at ten million runs is 60,000 pages.
// Updates that do not fit on their own page land wherever the free-space map points, often on pages months old, so
// index-only scans of old days (the dashboard's partial first day) fetched most of their rows from the heap: a 90-day
// dashboard grew from 49 to 109 ms at p95 over three bench runs. One vacuum with index cleanup a day, claimed by one
// instance, clears them; it reads every index of runs once (3.6 s at ten million runs when they are cached).
import type { AppContext } from '../context.ts';
import type { Db, Queryable } from '../storage/db.ts';

export const RUNS_VACUUM_PASS = 'runs-index-vacuum';
/** How often one instance vacuums runs with index cleanup. */
export const RUNS_VACUUM_EVERY_MS = 86_400_000;

/** One check: vacuums runs if no instance has started a vacuum in the last day. Returns whether this one did. */
export async function vacuumRunsIfDue(ctx: AppContext): Promise<boolean> {
  const now = ctx.clock.now();
  if (!(await claimPass(ctx.db, RUNS_VACUUM_PASS, now, RUNS_VACUUM_EVERY_MS))) return false;
  // PostgreSQL answers a VACUUM it does not allow with a warning and does nothing: say so instead.
  if (!(await mayVacuumRuns(ctx.db))) {
    ctx.log.warn('runs not vacuumed: the database user owns neither the table nor the database; run VACUUM (INDEX_CLEANUP ON) runs daily as its owner');
    return false;
  }
  const started = performance.now();
  await vacuumRunIndexes(ctx.db);
  ctx.log.info({ ms: Math.round(performance.now() - started) }, 'runs vacuumed with index cleanup');
  return true;
}

/**
 * Whether this connection's user may vacuum runs (PostgreSQL 15): as the table's or the database's owner (or a member
 * of the owning role), or as a superuser, for whom pg_has_role is always true.
 */
export async function mayVacuumRuns(q: Queryable): Promise<boolean> {
  const { rows } = await q.query<{ owns: boolean }>(
    `SELECT pg_has_role(current_user, c.relowner, 'MEMBER') OR pg_has_role(current_user, d.datdba, 'MEMBER') AS owns
     FROM pg_class c, pg_database d WHERE c.oid = 'runs'::regclass AND d.datname = current_database()`,
  );
  return rows[0]?.owns === true;
}

/** VACUUM runs, removing the index entries of dead row versions however few pages hold them. */
export async function vacuumRunIndexes(db: Db): Promise<void> {
  await db.maintain('VACUUM (INDEX_CLEANUP ON) runs');
}

/**
 * Claims the pass `name` at `now` unless one started less than `everyMs` before: one statement, so of several
 * instances checking at once exactly one gets it. A pass that fails is not retried before the next period.
 */
export async function claimPass(q: Queryable, name: string, now: Date, everyMs: number): Promise<boolean> {
  const { rows } = await q.query(
    `INSERT INTO maintenance_passes (name, last_started_at) VALUES ($1, $2)
     ON CONFLICT (name) DO UPDATE SET last_started_at = excluded.last_started_at
     WHERE maintenance_passes.last_started_at <= $2::timestamptz - make_interval(secs => $3::double precision)
     RETURNING name`,
    [name, now, everyMs / 1000],
  );
  return rows.length === 1;
}
