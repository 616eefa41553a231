// The workflow calls this instance holds open (n8n answers a run when its Respond node runs). Each has an
// AbortController so a cancel, a synchronous wait window or the running-timeout backstop can end it, and a
// `settled` promise that resolves once its answer has been applied to the run (or deliberately not).
//
// A held call is a socket on this process, so the registry is per instance: a member of the instance's context.
import type { WorkflowAnswer } from '../runtimes/runtime-adapter.ts';
import type { TransitionResult } from './run-transitions.ts';
import { isTerminal } from './run-states.ts';
import type { RunWatch } from './run-watch.ts';
import { settledWithin } from '../lib/within.ts';

/** Why a held call was ended by us rather than by the runtime. Only 'timeout' writes to the run on its own. */
export type AbortReason = 'timeout' | 'cancel' | 'window' | 'terminal' | 'shutdown';

export interface HeldSettlement {
  answer: WorkflowAnswer;
  /** The transition the answer caused, or null when it wrote nothing (an abort whose author writes the run). */
  result: TransitionResult | null;
}

export interface HeldCallEntry {
  readonly runId: number;
  readonly signal: AbortSignal;
  /** Set once the runtime accepted the call; resolves after the answer was applied. */
  settled: Promise<HeldSettlement> | null;
  abortReason(): AbortReason | null;
  abort(reason: AbortReason): void;
  /** The runtime has answered: nothing is left to abort (an abort would only cost an AbortError). */
  answered(): void;
  release(): void;
}

/** The workflow calls this instance holds open, by run id. */
export class HeldCalls {
  readonly #calls = new Map<number, HeldCallEntry>();

  constructor(private readonly runWatch: RunWatch) {}

  /**
   * Registers a call about to be made for `runId`. It is aborted with 'timeout' after `maxMs`, and with 'terminal'
   * as soon as the run turns terminal through any writer on any instance (the NOTIFY reaches this RunWatch), so a
   * finished run never keeps a socket open.
   */
  hold(runId: number, maxMs: number): HeldCallEntry {
    const calls = this.#calls;
    const controller = new AbortController();
    let reason: AbortReason | null = null;
    let answered = false;
    const abort = (why: AbortReason): void => {
      if (controller.signal.aborted || answered) return;
      reason = why;
      controller.abort();
    };
    const timer = setTimeout(() => abort('timeout'), maxMs);
    timer.unref();
    const unwatch = this.runWatch.watch(runId, (status) => {
      if (isTerminal(status)) abort('terminal');
    });
    const entry: HeldCallEntry = {
      runId,
      signal: controller.signal,
      settled: null,
      abortReason: () => reason,
      abort,
      answered: () => {
        answered = true;
      },
      release: () => {
        clearTimeout(timer);
        unwatch();
        if (calls.get(runId) === entry) calls.delete(runId);
      },
    };
    calls.set(runId, entry);
    return entry;
  }

  /** The held call for `runId` on this instance, if any: synchronous endpoints await `settled`. */
  get(runId: number): HeldCallEntry | null {
    return this.#calls.get(runId) ?? null;
  }

  /**
   * Ends the held call for `runId` on this instance. The answer handler then writes nothing (except for
   * 'timeout'): whoever aborts writes the run's status. Returns false when this instance holds no call for it.
   */
  abort(runId: number, reason: Exclude<AbortReason, 'timeout'>): boolean {
    const entry = this.#calls.get(runId);
    if (!entry) return false;
    entry.abort(reason);
    return true;
  }

  get size(): number {
    return this.#calls.size;
  }

  /**
   * Graceful shutdown, first step: lets held calls answer until `deadline` (ms since the epoch). Resolves when
   * none is left or the deadline passed; what is left is for abortAll.
   */
  async drain(deadline: number): Promise<void> {
    while (this.#calls.size > 0 && Date.now() < deadline) {
      // A call not yet accepted by the runtime has no `settled`: looked at again shortly.
      const pending = [...this.#calls.values()].map((e) => e.settled ?? new Promise((r) => setTimeout(r, 50)));
      await settledWithin(Promise.all(pending), deadline - Date.now());
    }
  }

  /** Graceful shutdown: hands every held run back (its lease lapses at once: recovery on another instance or the next start finishes it). */
  async abortAll(): Promise<void> {
    const entries = [...this.#calls.values()];
    for (const e of entries) e.abort('shutdown');
    await Promise.all(entries.map((e) => e.settled));
  }
}
