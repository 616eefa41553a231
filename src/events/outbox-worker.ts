// Delivers queued webhook-action events (decisions.md "Events"). A short cadence, plus a nudge: every status
// change NOTIFYs (run-transitions.ts), on whichever instance wrote it, so a new event is usually sent within milliseconds.
import type { AppContext } from '../context.ts';
import { Sweeper } from '../lib/sweeper.ts';
import { claimDueDeliveries } from './outbox-repo.ts';
import { parseRunNotification, RUN_EVENTS_CHANNEL } from '../runs/run-announcements.ts';
import type { OutboundClient } from '../lib/safe-http.ts';
import { deliverEvent, type DeliveryOutcome } from './deliver-event.ts';

/** Longer than a delivery can take (15 s timeout), so a lease only lapses when its worker died. */
const LEASE_MS = 60_000;
const BATCH = 20;
const EVENT_STATUSES = new Set(['completed', 'failed', 'cancelled', 'waiting']);

export type DeliveryTally = Record<DeliveryOutcome | 'error', number>;


/**
 * One pass: claims the rows due at `now` (in batches, until none are left) and attempts each; a batch's
 * deliveries run in parallel and end within the outbound timeout, well inside the lease. Callable directly
 * (tests move a ManualClock and call this); deliveries go through the instance's guarded client unless given one.
 */
export async function deliverDueOnce(ctx: AppContext, now: Date, client: OutboundClient = ctx.outbound): Promise<DeliveryTally> {
  const tally: DeliveryTally = { delivered: 0, retry: 0, given_up: 0, superseded: 0, error: 0 };
  for (let batch = 0; ; batch += 1) {
    // Later batches read the clock again: a lease computed from a stale `now` could already have lapsed.
    const at = batch === 0 ? now : ctx.clock.now();
    const lease = new Date(at.getTime() + LEASE_MS);
    const rows = await claimDueDeliveries(ctx.db, at, lease, BATCH);
    const outcomes = await Promise.all(
      rows.map((row) =>
        deliverEvent(ctx, client, row, at).catch((err: unknown): 'error' => {
          // A database error while settling, say: the row's lease lapses and it is tried again.
          ctx.log.error({ err, outboxId: row.id }, 'webhook action delivery crashed');
          return 'error';
        }),
      ),
    );
    for (const o of outcomes) {
      tally[o] += 1;
      ctx.metrics.deliveryAttempted(o);
    }
    if (rows.length < BATCH) return tally;
  }
}

/** The background loop: a Sweeper whose start also listens for status changes, and whose stop ends both. */
export class OutboxWorker extends Sweeper {
  readonly #ctx: AppContext;
  #unlisten: Promise<(() => Promise<void>) | null> | null = null;

  constructor(ctx: AppContext, intervalMs = 1_000) {
    super('outbox-delivery', intervalMs, () => deliverDueOnce(ctx, ctx.clock.now()), ctx.log);
    this.#ctx = ctx;
  }

  override start(): void {
    super.start();
    this.#unlisten = this.#ctx.db
      .listen(RUN_EVENTS_CHANNEL, (payload) => {
        if (EVENT_STATUSES.has(parseRunNotification(payload).status)) void this.runOnce();
      })
      .catch((err: unknown) => {
        // The timer still delivers; only the nudge is lost.
        this.#ctx.log.warn({ err }, 'outbox worker: cannot listen for run events');
        return null;
      });
  }

  override async stop(): Promise<void> {
    const unlisten = await this.#unlisten;
    await unlisten?.();
    await super.stop();
  }
}
