// The console's live runs (issue 14): one feed per app fans run status changes out to its subscribers (SSE
// streams), filtered by organization. The runs table is the source of truth: the feed reads runs changed since the
// last one it saw (runs_updated_idx), every POLL_MS and at once when a NOTIFY of run-transitions.ts arrives, from
// this instance or another. NOTIFY carries only terminal and `waiting` moves (the hot path pays for nothing more),
// so `queued` and `running` arrive with the next catch-up, within POLL_MS. Delivery is at least once.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../storage/db.ts';
import { RUN_EVENTS_CHANNEL } from '../runs/run-announcements.ts';
import type { RunStatus } from '../runs/run-states.ts';
import { newestRunChange, runsChangedSince, type RunChange } from '../runs/run-changes.ts';
import { inBackground } from '../tracing/spans.ts';

/** `orgIds` null: every organization (the platform admin). */
export interface FeedFilter {
  orgIds: string[] | null;
}

export interface RunFeedOptions {
  /** The catch-up period: how late a change whose NOTIFY was missed (or never sent) can be. */
  pollMs?: number;
  /** Rows per catch-up read; a longer backlog is read in several. */
  batch?: number;
}

export const FEED_POLL_MS = 2_000;
const FEED_BATCH = 1_000;
/**
 * Writers stamp updated_at before they commit, so a change can become visible with an updated_at a little older
 * than one already read. Each read looks this far back and drops what it already sent.
 */
export const OVERLAP_MS = 5_000;
/** A NOTIFY burst (many completions) is read once: at most one read per this many ms. */
const NUDGE_DELAY_MS = 50;

interface Subscriber {
  orgs: Set<string> | null;
  onEvent: (e: RunChange) => void;
}

export class RunFeed {
  private readonly subscribers = new Set<Subscriber>();
  private readonly pollMs: number;
  private readonly batch: number;
  /** What was sent per run (updated_at ms and status), pruned once older than the overlap window. */
  private readonly sent = new Map<number, { at: number; status: RunStatus }>();
  /** Where the next read starts: the newest updated_at seen (and its id), minus the overlap unless mid-backlog. */
  private cursor: { at: Date; id: number } | null = null;
  private midBacklog = false;
  private timer: NodeJS.Timeout | null = null;
  private nudgeTimer: NodeJS.Timeout | null = null;
  private reading: Promise<void> | null = null;
  private again = false;
  private unlisten: (() => Promise<void>) | null = null;
  private starting: Promise<void> | null = null;
  private closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    opts: RunFeedOptions = {},
  ) {
    this.pollMs = opts.pollMs ?? FEED_POLL_MS;
    this.batch = opts.batch ?? FEED_BATCH;
  }

  get size(): number {
    return this.subscribers.size;
  }

  /** Hears every run status change from now on, for `filter`'s organizations. Returns an unsubscribe function. */
  subscribe(filter: FeedFilter, onEvent: (e: RunChange) => void): () => void {
    if (this.closed) throw new Error('run feed closed');
    const sub: Subscriber = { orgs: filter.orgIds === null ? null : new Set(filter.orgIds.map((o) => o.toLowerCase())), onEvent };
    const idle = this.subscribers.size === 0;
    this.subscribers.add(sub);
    if (!this.starting) {
      this.starting = this.start().catch((err: unknown) => {
        this.starting = null; // the next subscriber tries again
        this.log.error({ err }, 'run feed: could not start');
      });
    } else if (idle) {
      // Nobody heard the changes made while nobody listened: start from now again rather than read them all.
      this.starting = this.starting.then(() => this.restart());
    }
    return () => void this.subscribers.delete(sub);
  }

  /** Resolves once the feed listens and knows where to read from (tests: subscribe, then write). */
  async ready(): Promise<void> {
    await this.starting;
  }

  async close(): Promise<void> {
    this.closed = true;
    this.subscribers.clear();
    if (this.timer) clearInterval(this.timer);
    if (this.nudgeTimer) clearTimeout(this.nudgeTimer);
    await this.starting;
    await this.reading;
    await this.unlisten?.();
  }

  private async start(): Promise<void> {
    // Listen first, then take the starting point: a change committed in between is read, not lost.
    this.unlisten = await this.db.listen(RUN_EVENTS_CHANNEL, () => this.nudge(), () => this.nudge());
    this.cursor = await this.newest();
    this.midBacklog = true; // after the newest row exactly: nothing up to it is news
    if (this.closed) return;
    this.timer = setInterval(() => inBackground(() => this.read()), this.pollMs);
    this.timer.unref();
  }

  /** After idling: waits out a read in flight, then takes the starting point anew (reads pause meanwhile). */
  private async restart(): Promise<void> {
    if (!this.cursor || this.closed) return; // never started (it will, on its own) or closed
    const saved = this.cursor;
    this.cursor = null;
    try {
      await this.reading;
      this.cursor = await this.newest();
      this.midBacklog = true;
      this.sent.clear();
    } catch (err) {
      this.cursor = saved; // read the backlog after all
      this.log.warn({ err }, 'run feed: could not take a new starting point');
    }
  }

  /** The newest change: nothing up to it is news. */
  private newest(): Promise<{ at: Date; id: number }> {
    return newestRunChange(this.db);
  }

  private nudge(): void {
    if (this.nudgeTimer || this.closed) return;
    this.nudgeTimer = setTimeout(() => {
      this.nudgeTimer = null;
      inBackground(() => this.read());
    }, NUDGE_DELAY_MS);
    this.nudgeTimer.unref();
  }

  /** One read at a time; a read asked for meanwhile runs right after. Nobody listening: nothing read. */
  private read(): void {
    if (this.closed || !this.cursor || this.subscribers.size === 0) return;
    if (this.reading) {
      this.again = true;
      return;
    }
    this.reading = this.readOnce()
      .catch((err: unknown) => this.log.warn({ err }, 'run feed: catch-up read failed; retrying at the next tick'))
      .finally(() => {
        this.reading = null;
        if (this.again) {
          this.again = false;
          this.read();
        }
      });
  }

  private async readOnce(): Promise<void> {
    const cursor = this.cursor!;
    const since = this.midBacklog ? cursor.at : new Date(cursor.at.getTime() - OVERLAP_MS);
    const events = await runsChangedSince(this.db, since, this.batch, null, this.midBacklog ? cursor.id : 0);
    for (const e of events) this.deliver(e);
    const last = events[events.length - 1];
    if (last && new Date(last.updated_at) >= cursor.at) this.cursor = { at: new Date(last.updated_at), id: last.runId };
    // A full batch: more is waiting right behind it; read on from exactly there, without looking back.
    this.midBacklog = events.length === this.batch;
    if (this.midBacklog) this.again = true;
    this.prune();
  }

  private deliver(e: RunChange): void {
    const at = Date.parse(e.updated_at);
    const before = this.sent.get(e.runId);
    // Already sent (the overlap re-reads it), or only an output report: the status did not change.
    if (before && (before.at >= at || before.status === e.status)) return;
    this.sent.set(e.runId, { at, status: e.status });
    for (const sub of this.subscribers) {
      if (sub.orgs && !sub.orgs.has(e.orgId)) continue;
      try {
        sub.onEvent(e);
      } catch (err) {
        this.log.warn({ err }, 'run feed: a subscriber failed');
      }
    }
  }

  private prune(): void {
    if (!this.cursor) return;
    const horizon = this.cursor.at.getTime() - 2 * OVERLAP_MS;
    for (const [runId, s] of this.sent) if (s.at < horizon) this.sent.delete(runId);
  }
}
