// The synchronous waits this instance holds (await-run.ts): the runs they watch, the one backstop timer that
// re-reads them all while any are watched, the batched first looks, and the shutdown hand-back. A member of the
// instance's context, so two instances in one process (tests) never share waits or a timer.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../storage/db.ts';
import { findRunStatuses, findTerminalAmong } from '../runs/runs-repo.ts';
import type { RunStatus } from '../runs/run-states.ts';
import type { RunWatch } from '../runs/run-watch.ts';
import { within } from '../lib/within.ts';
import { inBackground } from '../tracing/spans.ts';

/** Default backstop period: one query per tick for all of this instance's waits. */
export const DEFAULT_BACKSTOP_MS = 1_500;

const CHUNK = 5_000;

/** A backstop read that has not answered by then is given up, so a hung query cannot stop the backstop for good. */
const BACKSTOP_READ_MS = 5_000;

/** Ends one wait at its deadline; `handedBack` when shutdown ends it early. */
export type Expire = (handedBack: boolean) => Promise<void>;

/** The runs this instance waits for: one backstop timer while any are watched, and batched first looks. */
export class WaitRegistry {
  private readonly counts = new Map<number, number>(); // runId -> waits on it
  private readonly expirers = new Set<Expire>();
  private timer: NodeJS.Timeout | null = null;
  private ticking = false;
  /** A check was asked for while a tick ran: that tick may have read before what it was asked for; run one more. */
  private again = false;
  private looks: Array<[number, (status: RunStatus | null) => void]> = [];
  private readonly stopHearingReconnects: () => void;

  constructor(
    private readonly db: Db,
    private readonly runWatch: RunWatch,
    private readonly log: FastifyBaseLogger,
    /** Tests change it (e.g. to prove NOTIFY alone wakes a wait in time); it applies from the next tick. */
    public periodMs = DEFAULT_BACKSTOP_MS,
  ) {
    // Terminal writes announced while LISTEN was down were lost: look now rather than at the next tick.
    this.stopHearingReconnects = runWatch.onReconnect(() => this.checkNow());
  }

  /** How many synchronous callers this instance holds (the metrics' gauge). */
  get size(): number {
    return this.expirers.size;
  }

  /** How many runs this instance's waits are watching (diagnostics, tests). */
  get watchedRunCount(): number {
    return this.counts.size;
  }

  add(runId: number, expire: Expire): void {
    this.counts.set(runId, (this.counts.get(runId) ?? 0) + 1);
    this.expirers.add(expire);
    this.arm();
  }

  remove(runId: number, expire: Expire): void {
    this.expirers.delete(expire);
    const n = (this.counts.get(runId) ?? 1) - 1;
    if (n > 0) this.counts.set(runId, n);
    else this.counts.delete(runId);
    if (this.counts.size === 0 && this.timer) {
      clearTimeout(this.timer);
      this.timer = null;
    }
  }

  /**
   * Graceful shutdown (decisions.md "Scale-out": hand back held waits): ends every wait of this instance now, as
   * if its window had elapsed but marked `handedBack`, so callers get their 202 and the runs go on untouched.
   */
  async handBackAll(): Promise<number> {
    const all = [...this.expirers];
    await Promise.all(all.map((expire) => expire(true)));
    return all.length;
  }

  /** Hands back whatever is still held and clears the backstop timer. */
  async stop(): Promise<void> {
    this.stopHearingReconnects();
    await this.handBackAll();
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
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
        const rows = await findRunStatuses(this.db, part.map(([id]) => id));
        const status = new Map(rows.map((r) => [Number(r.id), r.status]));
        for (const [id, then] of part) then(status.get(id) ?? null);
      } catch (err) {
        // The backstop tick and the deadline read cover these waits.
        this.log.warn({ err }, 'synchronous wait first look failed');
      }
    }
  }

  /** The backstop's re-read, now (or right after the one running, which may have read too early; none if nothing is watched). */
  checkNow(): void {
    if (this.counts.size === 0) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    void this.tick();
  }

  private arm(): void {
    if (this.timer || this.ticking || this.counts.size === 0) return;
    this.timer = setTimeout(() => void inBackground(() => this.tick()), this.periodMs);
    this.timer.unref();
  }

  private async tick(): Promise<void> {
    this.timer = null;
    this.ticking = true;
    try {
      const ids = [...this.counts.keys()];
      for (let i = 0; i < ids.length; i += CHUNK) {
        const terminal = await within(findTerminalAmong(this.db, ids.slice(i, i + CHUNK)), BACKSTOP_READ_MS);
        // Re-publishing wakes the waits exactly as a NOTIFY would; they read the row themselves.
        for (const row of terminal) this.runWatch.publish(Number(row.id), row.status);
      }
    } catch (err) {
      this.log.warn({ err }, 'synchronous wait backstop check failed');
    } finally {
      this.ticking = false;
      if (this.again) {
        this.again = false;
        void this.tick();
      } else this.arm();
    }
  }
}
