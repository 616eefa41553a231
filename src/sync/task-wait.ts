// Task runtimes while a synchronous caller waits (spec 4.2 "Task runtime").
//
// The background poller checks a run once per poll interval (60 s by default), which would turn most sync waits
// into 202s. While a caller waits, the run is therefore polled here too, with a short backoff (0.5 s doubling to
// 15 s), and what it learns is applied by the poller's own rules (poll-run.ts), through the same guarded
// transitions (first terminal write wins).
//
// Spec 4.2: the 200's output_data is the task's return value, never what callbacks reported. When a callback (or
// anything else) completed the run first, the return value is read from the runtime once it is final there and,
// if it differs, stored over the reported output (status and timestamps are left alone), so the stored run and
// the response agree.
import { isDeepStrictEqual } from 'node:util';
import type { AppContext } from '../context.ts';
import { findRun, replaceCompletedOutput, type RunRow } from '../runs/runs-repo.ts';
import type { PolledRun } from '../runs/poll-claims.ts';

import type { Outcome, RemoteStatus } from '../runtimes/runtime-adapter.ts';
import { outputsOf } from '../runs/run-output.ts';
import { storableValue } from '../lib/storable-json.ts';
import type { PreparedRun } from '../runs/start-run.ts';
import { applyRemoteStatus } from '../runs/poll-run.ts';

// Doubling to a 15 s cap: with thousands of waits held, a 5 s cap read run status from Trigger.dev ~2,000 times a
// second (bench), enough to meet its rate limits. A callback still wakes a wait at once.
const POLL_DELAYS_MS = [500, 1_000, 2_000, 4_000, 8_000, 15_000];

/**
 * All the waits of this instance together read run status at most about this often per second: with N waits
 * polling, each waits at least N / budget seconds between reads. 10,000 held waits at the 15 s cap read ~700
 * times a second, which slowed taking new waits to a third (bench) and would meet a runtime's API rate limits.
 * The background poller and callbacks still end every run; this only spaces out the extra reads.
 */
export const SYNC_POLL_BUDGET_PER_SECOND = 100;

/** The waits of one instance polling right now, and the spacing that keeps them within the budget together. */
export class PollBudget {
  #active = 0;

  join(): void {
    this.#active++;
  }

  leave(): void {
    this.#active--;
  }

  /** With N waits polling, each waits at least N / budget seconds between reads. */
  minDelayMs(): number {
    return (this.#active / SYNC_POLL_BUDGET_PER_SECOND) * 1000;
  }
}

export interface TaskPoll {
  /**
   * Whether this poll wrote the terminal state itself (its output is then the return value already). Settles
   * after the poll's write of a final status, if one is under way: that write's own NOTIFY, carrying its row, can
   * wake the wait before the write has returned here.
   */
  appliedFromRuntime(): Promise<boolean>;
}

/** Polls the runtime until `stop` fires or the run is terminal there. Never throws. */
export function pollTaskWhileWaiting(
  ctx: AppContext,
  p: { run: PolledRun; target: string | null; runningTimeoutMs: number } & Pick<PreparedRun, 'runtime' | 'adapter'>,
  stop: AbortSignal,
): TaskPoll {
  const externalRunId = p.run.external_run_id;
  let applied = false;
  /** Settles once the write of a final status the runtime reported has returned and `applied` is marked. */
  let applying: Promise<void> | null = null;
  let attempt = 0;
  let timer: NodeJS.Timeout | null = null;
  let active = false;
  const done = (): void => {
    if (active) ctx.pollBudget.leave();
    active = false;
  };
  stop.addEventListener('abort', () => (timer && clearTimeout(timer), done()), { once: true });

  let run = p.run;
  const next = (): void => {
    if (stop.aborted || !externalRunId) return done();
    if (!active) ctx.pollBudget.join();
    active = true;
    // ±25% jitter: waits started in one burst would otherwise poll in bursts too, and a callback landing in
    // one waits behind a thousand status reads (bench: same-instance wake tail).
    const base = Math.max(POLL_DELAYS_MS[Math.min(attempt++, POLL_DELAYS_MS.length - 1)]!, ctx.pollBudget.minDelayMs());
    timer = setTimeout(() => void once(), base * (0.75 + Math.random() * 0.5));
    timer.unref();
  };
  const once = async (): Promise<void> => {
    timer = null;
    if (stop.aborted) return;
    try {
      const res = await p.adapter.fetchStatus(p.runtime, externalRunId!);
      if (stop.aborted) return;
      if (res.ok) {
        let marked = (): void => {};
        if (isFinal(res.value)) applying = new Promise<void>((r) => (marked = r));
        try {
          const outcome = await applyRemoteStatus(ctx, { run, runtimeId: p.runtime.id, target: p.target, runningTimeoutMs: p.runningTimeoutMs, pollIntervalS: 0 }, res.value);
          if ('result' in outcome && outcome.result.kind !== 'not_found') {
            // What this poll learnt of the run, so the next one does not try the same move again.
            const { status, started_at } = outcome.result.run;
            run = { ...run, status, started_at };
          }
          if ('result' in outcome && outcome.result.kind === 'applied') {
            // Marked before the wake-up is published, so the waiter never sees the run terminal without the flag.
            applied = outcome.kind === 'terminal';
            ctx.runWatch.publishRun(outcome.result.run);
          }
        } finally {
          marked();
        }
        if (isFinal(res.value)) return; // terminal there: nothing more to learn
      }
      // A failed status read (replica lag right after the trigger, a blip) is simply tried again.
    } catch (err) {
      ctx.log.warn({ err, runId: p.run.id }, 'polling a waited-for task run failed');
    }
    next();
  };
  next();
  return {
    appliedFromRuntime: async () => {
      await applying;
      return applied;
    },
  };
}

/**
 * A completed task run as spec 4.2's 200 shows it: output_data is the runtime's return value. Reads it (retrying
 * briefly while the runtime has not finished yet, up to the deadline), stores it when it differs from what was
 * stored, and returns the row. Any trouble reaching the runtime leaves the stored row as it is.
 */
export async function withTaskReturnValue(
  ctx: AppContext,
  prepared: Pick<PreparedRun, 'runtime' | 'adapter'>,
  run: RunRow,
  deadline: number,
  externalRunId: string | null,
  /** A read started when the completion was reported; used only if it already saw the run completed. */
  earlyRead?: Promise<RemoteRead>,
): Promise<RunRow> {
  const ext = run.external_run_id ?? externalRunId;
  if (run.status !== 'completed' || !ext) return run;
  const early = await earlyRead;
  for (let attempt = 0; ; attempt++) {
    const res = attempt === 0 && early?.ok && early.value.status === 'completed' ? early : await readTaskStatus(prepared, ext);
    if (res?.ok && res.value.status === 'completed') {
      const output = storableValue(res.value.output); // as the run holds it once stored (NUL, lone surrogates)
      if (isDeepStrictEqual(output, run.output_data ?? null)) return run;
      try {
        const updated = await replaceCompletedOutput(ctx.db, run.id, output, outputsOf(output), ctx.clock.now());
        return updated ?? (await findRun(ctx.db, run.id)) ?? run;
      } catch (err) {
        ctx.log.warn({ err, runId: run.id }, 'could not store the task return value');
        return run;
      }
    }
    // Failed or cancelled there: our first terminal write stands, and so does its output.
    if (res?.ok && isFinal(res.value)) return run;
    const wait = Math.min(250 * 2 ** attempt, 2_000);
    if (Date.now() + wait > deadline) return run;
    await new Promise((r) => setTimeout(r, wait));
  }
}

/** One status read of a task run at its runtime; null when the runtime could not be reached. */
export type RemoteRead = Outcome<RemoteStatus> | null;

export function readTaskStatus(prepared: Pick<PreparedRun, 'runtime' | 'adapter'>, externalRunId: string | null): Promise<RemoteRead> {
  if (!externalRunId) return Promise.resolve(null);
  return prepared.adapter.fetchStatus(prepared.runtime, externalRunId).catch(() => null);
}

function isFinal(remote: RemoteStatus): boolean {
  return remote.status === 'completed' || remote.status === 'failed' || remote.status === 'cancelled';
}
