// Which runs have a runtime call alive on some instance (decisions.md "Recovering lost runs").
//
// A run started here is inserted with `invoke_lease_until` in the future. While this instance holds the run's
// runtime call (n8n's held webhook call, a file stream, a task trigger in flight) it renews the lease; a task run
// gives it up once its trigger is recorded. A lease that lapses on a run still active means the instance holding
// the call is gone (kill -9, a crash, a restart) or handed it back (shutdown): the recovery sweep then claims the
// run (re-using the column as its own short claim) and looks it up at the runtime.
import type { FastifyBaseLogger } from 'fastify';
import type { Db, Queryable } from '../storage/db.ts';
import type { Clock } from '../lib/clock.ts';
import { withExternalRunId, type RunRow } from './runs-repo.ts';
import { inBackground } from '../tracing/spans.ts';

/** The runs whose runtime calls this instance holds, with their leases kept in the future. */
export class RunLeases {
  readonly #held = new Map<number, number>(); // run id → holders (a trigger and its stream may overlap)
  #timer: NodeJS.Timeout | null = null;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    readonly leaseMs: number,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** The lease a new run is inserted with. */
  firstLease(now: Date): Date {
    return new Date(now.getTime() + this.leaseMs);
  }

  /** Keeps renewing the run's lease until the returned function is called (idempotent). */
  hold(runId: number): () => void {
    this.#held.set(runId, (this.#held.get(runId) ?? 0) + 1);
    // Renewed a third of a lease apart: a renewal can fail twice before the lease lapses.
    // Armed by whichever request holds the first lease: its renewals are the instance's, not that request's (background).
    this.#timer ??= setInterval(() => void inBackground(() => this.#renew()), Math.max(100, Math.floor(this.leaseMs / 3))).unref();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = (this.#held.get(runId) ?? 1) - 1;
      if (left > 0) this.#held.set(runId, left);
      else this.#held.delete(runId);
      if (this.#held.size === 0) this.stop();
    };
  }

  get size(): number {
    return this.#held.size;
  }

  /** Shutdown: these runs' calls are abandoned here; their leases lapse now so recovery needs no wait. */
  async handBack(runIds: readonly number[]): Promise<void> {
    for (const id of runIds) this.#held.delete(id);
    if (runIds.length === 0) return;
    await this.db.query(
      `UPDATE runs SET invoke_lease_until = $2 WHERE id = ANY($1::bigint[]) AND invoke_lease_until IS NOT NULL`,
      [runIds, this.clock.now()],
    );
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }

  async #renew(): Promise<void> {
    const ids = [...this.#held.keys()];
    if (ids.length === 0) return;
    try {
      await this.db.query(
        `UPDATE runs SET invoke_lease_until = $2
         WHERE id = ANY($1::bigint[]) AND invoke_lease_until IS NOT NULL AND status IN ('queued', 'running', 'waiting')`,
        [ids, new Date(this.clock.now().getTime() + this.leaseMs)],
      );
    } catch (err) {
      // The next tick tries again; if the lease lapses meanwhile, recovery finds the call still running at the
      // runtime and leaves the run alone until it ends (first terminal write wins).
      this.log.warn({ err, runs: ids.length }, 'could not renew the leases of held runtime calls');
    }
  }
}

/** A run whose lease lapsed, claimed for one recovery attempt, with what the lookup needs of its agent. */
export interface LostRun {
  run: Pick<RunRow, 'id' | 'status' | 'started_at' | 'created_at' | 'external_run_id'>;
  runtimeId: number | null;
  target: string | null;
  runningTimeoutMs: number;
  pollIntervalS: number;
}

type LostRow = LostRun['run'] & { runtime_id: number | null; target: string | null; running_timeout_ms: number; poll_interval_s: number };

/**
 * Claims active runs whose lease lapsed, pushing the lease `retryMs` ahead: the claim keeps other instances off
 * while this one looks, and a run not found yet is looked at again after that.
 */
export async function claimLostRuns(q: Queryable, now: Date, limit: number, retryMs: number): Promise<LostRun[]> {
  const { rows } = await q.query<LostRow>(
    `WITH lost AS (
       SELECT r.id FROM runs r
       WHERE r.invoke_lease_until <= $1 AND r.status IN ('queued', 'running', 'waiting')
       ORDER BY r.invoke_lease_until
       LIMIT $2
       FOR UPDATE OF r SKIP LOCKED
     )
     UPDATE runs r SET invoke_lease_until = $1::timestamptz + make_interval(secs => $3::double precision)
     FROM lost, agents a
     WHERE r.id = lost.id AND a.id = r.agent_id
     RETURNING r.id, r.status, r.started_at, r.created_at, r.external_run_id,
               a.runtime_id, a.target, a.running_timeout_ms, a.poll_interval_s`,
    [now, limit, retryMs / 1000],
  );
  return rows.map(({ runtime_id, target, running_timeout_ms, poll_interval_s, ...run }) => ({
    run,
    runtimeId: runtime_id,
    target,
    runningTimeoutMs: Number(running_timeout_ms),
    pollIntervalS: Number(poll_interval_s),
  }));
}

/**
 * The runtime has the run: no lease any more (the poller follows it by its id from now on), its id and, where
 * the runtime's record is not the whole answer, a note for the run detail.
 */
export function adoptFoundRun(
  q: Queryable, runId: number, found: { externalRunId: string | null; note: string | null; nextPollAt: Date }, now: Date,
): Promise<Pick<RunRow, 'external_run_id'> | null> {
  return withExternalRunId(found.externalRunId, async (id) => {
    const { rows } = await q.query<Pick<RunRow, 'external_run_id'>>(
      `UPDATE runs SET
         external_run_id = coalesce(external_run_id, $2),
         runtime_note = coalesce($3, runtime_note),
         invoke_lease_until = NULL,
         next_poll_at = CASE WHEN status IN ('queued', 'running', 'waiting') THEN $4::timestamptz ELSE next_poll_at END,
         updated_at = $5
       WHERE id = $1 RETURNING external_run_id`,
      [runId, id, found.note, found.nextPollAt, now],
    );
    return rows[0] ?? null;
  });
}

/** Nothing to recover (no runtime to ask): the lease goes; the run's timeouts end it. */
export async function dropLease(q: Queryable, runId: number): Promise<void> {
  await q.query('UPDATE runs SET invoke_lease_until = NULL WHERE id = $1', [runId]);
}

/**
 * What a cancel learnt at the runtime: a sentence for the run detail about what it could not do there, and the id
 * the run was found under (kept only if the run has none, and only if the column can take it).
 */
export async function noteRuntime(q: Queryable, runId: number, found: { note: string | null; externalRunId: string | null }): Promise<void> {
  await withExternalRunId(found.externalRunId, (id) =>
    q.query('UPDATE runs SET runtime_note = coalesce($2, runtime_note), external_run_id = coalesce(external_run_id, $3) WHERE id = $1', [runId, found.note, id]),
  );
}
