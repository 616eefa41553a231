// The console's live run streams on this instance (issue 14; bounds of issue 35): the one run feed they share, the
// streams that are open (shutdown ends them), and how many each holder has against the configured caps. A member
// of the context (house style 15), so two instances in one process share nothing.
import type { FastifyBaseLogger } from 'fastify';
import type { Db } from '../storage/db.ts';
import type { LiveStreamSettings } from '../config.ts';
import { RunFeed } from './run-feed.ts';

/** What shutdown needs of an open stream. */
export interface OpenStream {
  end(): void;
}

export class LiveRunStreams {
  private feed: RunFeed | null = null;
  private readonly open = new Set<OpenStream>();
  /** Open streams per holder (`userId`, or `admin` for the admin token). */
  private readonly perHolder = new Map<string, number>();

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    readonly settings: Readonly<LiveStreamSettings>,
  ) {}

  get size(): number {
    return this.open.size;
  }

  /** Which cap one more stream for `holder` would pass (per user: 429; this instance: 503), or null. */
  refusal(holder: string): 'per_user' | 'instance' | null {
    if ((this.perHolder.get(holder) ?? 0) >= this.settings.maxStreamsPerUser) return 'per_user';
    return this.open.size >= this.settings.maxStreams ? 'instance' : null;
  }

  /** Registers a stream; returns the feed to subscribe to, and `remove`, to call once the stream has closed. */
  add(holder: string, stream: OpenStream): { feed: RunFeed; remove: () => void } {
    this.feed ??= new RunFeed(this.db, this.log, { pollMs: this.settings.pollMs });
    this.open.add(stream);
    this.perHolder.set(holder, (this.perHolder.get(holder) ?? 0) + 1);
    let removed = false;
    const remove = (): void => {
      if (removed) return;
      removed = true;
      this.open.delete(stream);
      const left = (this.perHolder.get(holder) ?? 1) - 1;
      if (left === 0) this.perHolder.delete(holder);
      else this.perHolder.set(holder, left);
    };
    return { feed: this.feed, remove };
  }

  /** Ends every open stream and closes the feed (before the server stops: open streams would hold it). */
  async close(): Promise<void> {
    for (const stream of this.open) stream.end();
    const feed = this.feed;
    this.feed = null;
    await feed?.close();
  }
}
