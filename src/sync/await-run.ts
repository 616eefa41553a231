// Holding a synchronous caller until its run is terminal (spec 4.2, 4.3, 4.7, 8.3; decisions.md "Scale-out").
//
// A wait subscribes to the instance's RunWatch BEFORE it first looks at the row, so a transition that lands
// between the look and the subscription still wakes it. Wake-ups come from this instance's writes (publish) and
// from every other instance's (the NOTIFY each transition sends). NOTIFY is not guaranteed (a dropped LISTEN
// connection loses messages), so one shared backstop timer per instance re-reads every watched run in a single
// query and re-publishes the terminal ones: a lost notification costs latency, never the answer.
//
// Per wait this keeps one closure, one listener entry and one deadline timer: no interval and no query of its
// own. A terminal write on this instance hands its row to the waits, so they read nothing; so does the NOTIFY of
// a write on another instance when the row fits in it (run-announcements.ts), else the woken wait reads it once. A
// wait on a run this instance has just created, subscribed before the runtime learns of the run, needs no first
// look either (`fresh`): nothing can have ended the run before. Other first looks that arrive together are
// batched into one query, so a burst of waits costs a handful of statements.
import type { AppContext } from '../context.ts';
import { findRun, type RunRow } from '../runs/runs-repo.ts';
import { isTerminal } from '../runs/run-states.ts';
import { within } from '../lib/within.ts';

/**
 * How long the deadline's read may take. The database may be down just then (decisions.md "Bounded waits"): the
 * caller is answered anyway, a moment after its window, with what is known.
 */
export const DEADLINE_READ_MS = 2_000;

export type AwaitOutcome =
  | { kind: 'terminal'; run: RunRow }
  /**
   * The deadline passed; `run` is the row as read at that moment (not terminal). `handedBack` marks a wait
   * ended early by shutdown: its window did not elapse, so nothing may be concluded from the run's silence.
   */
  | { kind: 'timeout'; run: RunRow; handedBack?: true }
  /** The caller's signal fired (it disconnected): the wait ends, the run goes on untouched. */
  | { kind: 'aborted' }
  | { kind: 'not_found' }
  /** The deadline passed and the run could not be read in time (the database is unavailable). */
  | { kind: 'unknown'; handedBack?: true };

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

/**
 * Resolves `outcome` when run `runId` is terminal, the deadline passes, the signal fires or the caller cancels.
 * Subscribed when this returns. Never changes the run.
 */
export function watchTerminal(ctx: AppContext, runId: number, opts: AwaitOptions): RunWait {
  if (opts.signal?.aborted) return { outcome: Promise.resolve({ kind: 'aborted' }), cancel: () => {} };
  const registry = ctx.waits;
  let cancel = (): void => {};
  const outcome = new Promise<AwaitOutcome>((resolve) => {
    let done = false;
    let reading = false;
    let readAgain = false;

    const finish = (outcome: AwaitOutcome): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      unwatch();
      registry.remove(runId, expire);
      opts.signal?.removeEventListener('abort', onAbort);
      resolve(outcome);
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
      // Only the status (a NOTIFY whose row was too big to carry, the backstop): read the row, one turn later. A
      // write on this instance sends its NOTIFY too, and that echo can arrive just before the write's own row is
      // published here, which then wins.
      else setImmediate(readTerminal);
    });
    opts.signal?.addEventListener('abort', onAbort, { once: true });

    // The deadline's final read, bounded; shutdown runs it early with `handedBack`.
    const expire = async (handedBack = false): Promise<void> => {
      if (done) return;
      let run: RunRow | null;
      try {
        run = await within(findRun(ctx.db, runId), DEADLINE_READ_MS);
      } catch (err) {
        ctx.log.warn({ err, runId }, 'a waited-for run could not be read at its deadline');
        return finish(handedBack ? { kind: 'unknown', handedBack } : { kind: 'unknown' });
      }
      if (!run) return finish({ kind: 'not_found' });
      if (isTerminal(run.status)) return finish({ kind: 'terminal', run });
      finish(handedBack ? { kind: 'timeout', run, handedBack } : { kind: 'timeout', run });
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
