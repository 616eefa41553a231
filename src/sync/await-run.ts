// Holding a synchronous caller until its run is terminal (spec 4.2, 4.3, 4.7, 8.3; decisions.md "Scale-out").
//
// A wait subscribes to the instance's RunWatch BEFORE it first looks at the row, so a transition that lands
// between the look and the subscription still wakes it. Wake-ups come from this instance's writes (publish) and
// from every other instance's (the NOTIFY each transition sends). NOTIFY is not guaranteed (a dropped LISTEN
// connection loses messages), so one shared backstop timer per instance re-reads every watched run in a single
// query and re-publishes the terminal ones: a lost notification costs latency, never the answer.
//
// Per wait this keeps one closure, one listener entry and one deadline timer: no interval and no query of its
// own. A terminal write on this instance hands its row to the waits, so they read nothing; one woken by another
// instance reads the row once. A wait on a run this instance has just created, subscribed before the runtime
// learns of the run, needs no first look either (`fresh`): nothing can have ended the run before. Other first
// looks that arrive together are batched into one query, so a burst of waits costs a handful of statements.
import type { AppContext } from '../context.ts';
import { findRun, findRunStatuses, findTerminalAmong, type RunRow } from '../runs/runs-repo.ts';
import { isTerminal, type RunStatus } from '../runs/run-states.ts';
import type { RunWatch } from '../runs/run-watch.ts';

export type AwaitOutcome =
  | { kind: 'terminal'; run: RunRow }
  /**
   * The deadline passed; `run` is the row as read at that moment (not terminal). `handedBack` marks a wait
   * ended early by shutdown: its window did not elapse, so nothing may be concluded from the run's silence.
   */
  | { kind: 'timeout'; run: RunRow; handedBack?: true }
  /** The caller's signal fired (it disconnected): the wait ends, the run goes on untouched. */
  | { kind: 'aborted' }
  | { kind: 'not_found' };

export interface AwaitOptions {
  /** Absolute deadline in ms since the epoch (real time: timers run on it, not on ctx.clock). */
  deadline: number;
  /** Ends the wait (not the run) early, e.g. when the caller disconnects. */
  signal?: AbortSignal;
  /**
   * The run was just created here and nothing that could end it knows its id yet (the runtime is invoked after
   * this call): skip the first look.
   */
  fresh?: boolean;
}

export interface RunWait {
  outcome: Promise<AwaitOutcome>;
  /** Ends the wait now as `aborted` (a no-op once it has ended). */
  cancel(): void;
}

type Ctx = Pick<AppContext, 'db' | 'runWatch' | 'log'>;

/** Default backstop period: one query per tick for all of this instance's waits. */
export const DEFAULT_BACKSTOP_MS = 1_500;

/**
 * Resolves `outcome` when run `runId` is terminal, the deadline passes, the signal fires or the caller cancels.
 * Subscribed when this returns. Never changes the run.
 */
export function watchTerminal(ctx: Ctx, runId: number, opts: AwaitOptions): RunWait {
  if (opts.signal?.aborted) return { outcome: Promise.resolve({ kind: 'aborted' }), cancel: () => {} };
  const registry = registryFor(ctx);
  let cancel = (): void => {};
  const outcome = new Promise<AwaitOutcome>((resolve, reject) => {
    let done = false;
    let reading = false;
    let readAgain = false;

    const finish = (outcome: AwaitOutcome | Error): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unwatch();
      registry.remove(runId, expire);
      opts.signal?.removeEventListener('abort', onAbort);
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    };

    // Reads the whole row once the run is known to be terminal. One read at a time; a wake-up during a read
    // triggers one more read afterwards.
    const readTerminal = async (): Promise<void> => {
      if (done) return;
      if (reading) {
        readAgain = true;
        return;
      }
      reading = true;
      try {
        do {
          readAgain = false;
          const run = await findRun(ctx.db, runId);
          if (!run) return finish({ kind: 'not_found' });
          if (isTerminal(run.status)) return finish({ kind: 'terminal', run });
        } while (readAgain && !done);
      } catch (err) {
        // Retried by the backstop's next wake-up, or settled by the deadline.
        ctx.log.warn({ err, runId }, 'reading a waited-for run failed');
      } finally {
        reading = false;
      }
    };

    const onAbort = (): void => finish({ kind: 'aborted' });
    cancel = onAbort;
    const unwatch = ctx.runWatch.watch(runId, (status, run) => {
      if (!isTerminal(status)) return;
      if (run) finish({ kind: 'terminal', run });
      // Only the status (a NOTIFY): read the row, one turn later. A write on this instance sends its NOTIFY too,
      // and that echo can arrive just before the write's own row is published here, which then wins.
      else setImmediate(readTerminal);
    });
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    // The deadline's final read; shutdown runs it early with `handedBack`.
    const expire = (handedBack = false): Promise<void> => {
      if (done) return Promise.resolve();
      return findRun(ctx.db, runId).then(
        (run) => {
          if (!run) return finish({ kind: 'not_found' });
          if (isTerminal(run.status)) return finish({ kind: 'terminal', run });
          finish(handedBack ? { kind: 'timeout', run, handedBack } : { kind: 'timeout', run });
        },
        (err: unknown) => finish(err instanceof Error ? err : new Error(String(err))),
      );
    };
    registry.add(runId, expire);
    // Nothing above can call finish() synchronously, so `timer` is always set before finish() reads it.
    const timer = setTimeout(() => void expire(), Math.max(0, opts.deadline - Date.now()));

    // The first look, after subscribing (no lost wake-up), batched with every other wait starting now.
    if (!opts.fresh) {
      registry.firstLook(runId, (status) => {
        if (status === null) finish({ kind: 'not_found' });
        else if (isTerminal(status)) void readTerminal();
      });
    }
  });
  return { outcome, cancel: () => cancel() };
}

/**
 * Graceful shutdown (decisions.md "Scale-out": hand back held waits): ends every wait of this instance now, as
 * if its window had elapsed but marked `handedBack`, so callers get their 202 and the runs go on untouched.
 */
export async function handBackAllWaits(ctx: Pick<AppContext, 'runWatch'>): Promise<number> {
  return (await registries.get(ctx.runWatch)?.expireAll()) ?? 0;
}

/** Tests: changes this instance's backstop period (e.g. to prove NOTIFY alone wakes a wait in time). */
export function setBackstopPeriod(ctx: Pick<AppContext, 'runWatch'>, ms: number): void {
  const r = registries.get(ctx.runWatch);
  if (r) r.periodMs = ms;
  else periodOverrides.set(ctx.runWatch, ms);
}

/** How many runs this instance's waits are watching (diagnostics, tests). */
export function watchedRunCount(ctx: Pick<AppContext, 'runWatch'>): number {
  return registries.get(ctx.runWatch)?.size ?? 0;
}

// Keyed by the instance's RunWatch: the route and background copies of one AppContext share it, two instances
// never do (the same scheme as held-workflow-calls.ts).
const registries = new WeakMap<RunWatch, WaitRegistry>();
const periodOverrides = new WeakMap<RunWatch, number>();

function registryFor(ctx: Ctx): WaitRegistry {
  let r = registries.get(ctx.runWatch);
  if (!r) {
    r = new WaitRegistry(ctx, periodOverrides.get(ctx.runWatch) ?? DEFAULT_BACKSTOP_MS);
    registries.set(ctx.runWatch, r);
  }
  return r;
}

const CHUNK = 5_000;

/** The runs this instance waits for: one backstop timer while any are watched, and batched first looks. */
class WaitRegistry {
  private readonly counts = new Map<number, number>(); // runId -> waits on it
  private readonly expirers = new Set<(handedBack: boolean) => Promise<void>>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  private looks: Array<[number, (status: RunStatus | null) => void]> = [];

  constructor(
    private readonly ctx: Ctx,
    public periodMs: number,
  ) {}

  get size(): number {
    return this.counts.size;
  }

  add(runId: number, expire: (handedBack: boolean) => Promise<void>): void {
    this.counts.set(runId, (this.counts.get(runId) ?? 0) + 1);
    this.expirers.add(expire);
    this.arm();
  }

  remove(runId: number, expire: (handedBack: boolean) => Promise<void>): void {
    this.expirers.delete(expire);
    const n = (this.counts.get(runId) ?? 1) - 1;
    if (n > 0) this.counts.set(runId, n);
    else this.counts.delete(runId);
    if (this.counts.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  async expireAll(): Promise<number> {
    const all = [...this.expirers];
    await Promise.all(all.map((expire) => expire(true)));
    return all.length;
  }

  /** Looks every run asked for in this turn of the event loop up in one query; null for a run that is missing. */
  firstLook(runId: number, then: (status: RunStatus | null) => void): void {
    this.looks.push([runId, then]);
    if (this.looks.length === 1) setImmediate(() => void this.flushLooks());
  }

  private async flushLooks(): Promise<void> {
    const batch = this.looks;
    this.looks = [];
    for (let i = 0; i < batch.length; i += CHUNK) {
      const part = batch.slice(i, i + CHUNK);
      try {
        const rows = await findRunStatuses(this.ctx.db, part.map(([id]) => id));
        const status = new Map(rows.map((r) => [Number(r.id), r.status]));
        for (const [id, then] of part) then(status.get(id) ?? null);
      } catch (err) {
        // The backstop tick and the deadline read cover these waits.
        this.ctx.log.warn({ err }, 'synchronous wait first look failed');
      }
    }
  }

  private arm(): void {
    if (this.timer || this.ticking || this.counts.size === 0) return;
    this.timer = setTimeout(() => void this.tick(), this.periodMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    this.ticking = true;
    try {
      const ids = [...this.counts.keys()];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const terminal = await findTerminalAmong(this.ctx.db, ids.slice(i, i + CHUNK));
        // Re-publishing wakes the waits exactly as a NOTIFY would; they read the row themselves.
        for (const row of terminal) this.ctx.runWatch.publish(Number(row.id), row.status);
      }
    } catch (err) {
      this.ctx.log.warn({ err }, 'synchronous wait backstop check failed');
    } finally {
      this.ticking = false;
      this.arm();
    }
  }
}
