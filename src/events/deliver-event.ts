// One webhook-action delivery (decisions.md "Events"; spec part 6): the body `{ run, output }` built from the run
// as it was when the event happened, signed per Standard Webhooks, POSTed through the SSRF-guarded client.
// At-least-once: the webhook-id (outbox message_id) is the same on every attempt, so receivers dedupe on it.
import type { AppContext } from '../context.ts';
import type { Config } from '../config.ts';
import type { ClaimedDelivery } from './outbox-repo.ts';
import { markDelivered, markGivenUp, scheduleRetry } from './outbox-repo.ts';
import type { RunRow } from '../runs/runs-repo.ts';
import type { OutboundClient, OutboundResult } from '../lib/safe-http.ts';
import { signWebhook } from './standard-webhooks.ts';
import { contextOfTraceparent, startClientSpan } from '../tracing/spans.ts';
import { sealedAt } from '../storage/sealed-columns.ts';
import { toAdminRunView, type AdminRunView } from '../runs/run-view.ts';

/** The run as receivers have always got it: the admin view without `source` (an admin/console field). */
export type EventRun = Omit<AdminRunView, 'source'>;

export interface EventBody {
  run: EventRun;
  output: unknown;
  /** `waiting` events only: spec part 6 `{{run_url}}`. */
  run_url?: string;
  /** `waiting` events only: what the reviewer is asked (the token id stays private: for n8n it is a capability). */
  waiting?: { description: string | null; url: string | null; output: unknown };
}

export type DeliveryOutcome = 'delivered' | 'retry' | 'given_up' | 'superseded';

/**
 * Retry delays after the 1st, 2nd, … failed attempt (the last repeats), each with ±20 % jitter so receivers
 * coming back from an outage are not hit by every queued event at once.
 */
export const RETRY_DELAYS_MS: readonly number[] = [10_000, 30_000, 120_000, 600_000, 1_800_000, 3_600_000, 7_200_000, 14_400_000, 21_600_000];
/** The last attempt is made this long after the event at the latest; a failure then is final. */
export const GIVE_UP_AFTER_MS = 24 * 3_600_000;

/** Spec part 6: the callback's `url` when given, otherwise the generic run-detail link. */
export function runUrl(config: Pick<Config, 'publicUrl'>, runId: number, waitingUrl: unknown): string {
  return typeof waitingUrl === 'string' && waitingUrl !== '' ? waitingUrl : `${config.publicUrl}/runs/${runId}`;
}

export function buildEventBody(config: Pick<Config, 'publicUrl'>, event: string, snapshot: Record<string, unknown>): EventBody {
  const { source: _source, ...run } = toAdminRunView(runFromSnapshot(snapshot));
  const body: EventBody = { run, output: run.output_data };
  if (event === 'waiting') {
    const ws = (snapshot.wait_state ?? null) as { description?: unknown; url?: unknown; output?: unknown } | null;
    body.run_url = runUrl(config, run.runId, ws?.url);
    body.waiting = {
      description: typeof ws?.description === 'string' ? ws.description : null,
      url: typeof ws?.url === 'string' ? ws.url : null,
      output: ws?.output ?? null,
    };
  }
  return body;
}

/** The outbox snapshot is `to_jsonb(run row)`: timestamps arrive as ISO strings. */
function runFromSnapshot(s: Record<string, unknown>): RunRow {
  const date = (v: unknown): Date | null => (typeof v === 'string' ? new Date(v) : null);
  return {
    ...(s as unknown as RunRow),
    created_at: date(s.created_at) ?? new Date(0),
    started_at: date(s.started_at),
    completed_at: date(s.completed_at),
    next_poll_at: date(s.next_poll_at),
  };
}

/** Attempts one claimed delivery and settles its row. Never throws for an expected failure. */
export async function deliverEvent(
  ctx: AppContext,
  client: OutboundClient,
  row: ClaimedDelivery,
  now: Date,
  random: () => number = Math.random,
): Promise<DeliveryOutcome> {
  const lease = row.locked_until!;
  if (row.action_url === null || row.action_secret_enc === null || row.webhook_action_id === null) {
    return settle(await markGivenUp(ctx.db, row.id, lease, now, 'webhook action no longer exists'), 'given_up');
  }
  let body: string;
  let headers: Record<string, string>;
  try {
    body = JSON.stringify(buildEventBody(ctx.config, row.event, row.snapshot));
    headers = signWebhook({ id: row.message_id, timestamp: now, body, secret: ctx.secrets.open(row.action_secret_enc, sealedAt('webhook_actions', 'signing_secret_enc', row.webhook_action_id)) });
  } catch (err) {
    // A surprise (the master key changed?); retried on the normal schedule, since an operator can fix it.
    ctx.log.error({ err, outboxId: row.id }, 'webhook action event cannot be signed');
    return failed(ctx, row, lease, now, 'event cannot be signed (signing secret unreadable)', true, random);
  }
  // In the trace the run was started in, when it was started in one: the receiver's work joins it.
  const span = startClientSpan('webhook delivery', { 'ars.run_id': row.run_id ?? 0, 'ars.event': row.event }, contextOfTraceparent(row.traceparent));
  const result = await client.post(row.action_url, body, { ...span.headers, 'content-type': 'application/json', ...headers });
  span.end(result.ok ? { status: result.status } : { status: result.status, error: result.reason });
  if (result.ok) return settle(await markDelivered(ctx.db, row.id, lease, now), 'delivered');
  return failed(ctx, row, lease, now, describe(result), isWorthRetrying(result), random);
}

/**
 * Every HTTP answer but 2xx is retried, as Stripe and Svix do: a receiver's 404/401 is often a deploy or a key
 * rotation in progress. A bad URL or a refused address (SSRF guard) will not fix itself, so it ends at once.
 */
function isWorthRetrying(result: Exclude<OutboundResult, { ok: true }>): boolean {
  return result.reason !== 'invalid_url' && result.reason !== 'blocked_address';
}

/** Short and secret-free: the reason, the status, and the client's detail (a fixed text or an error code). */
function describe(result: Exclude<OutboundResult, { ok: true }>): string {
  return [result.reason, result.status === undefined ? null : `HTTP ${result.status}`, result.detail ?? null].filter(Boolean).join(': ');
}

async function failed(
  ctx: AppContext,
  row: ClaimedDelivery,
  lease: Date,
  now: Date,
  error: string,
  retry: boolean,
  random: () => number,
): Promise<DeliveryOutcome> {
  const attempt = row.attempts + 1;
  const base = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length) - 1]!;
  // The last try lands on the deadline itself rather than being skipped because the full delay overshoots it.
  const deadline = eventTime(row).getTime() + GIVE_UP_AFTER_MS;
  const next = new Date(Math.min(now.getTime() + Math.round(base * (0.8 + 0.4 * random())), deadline));
  const log = { outboxId: row.id, runId: row.run_id, event: row.event, attempt, error };
  if (retry && next.getTime() > now.getTime()) {
    ctx.log.warn({ ...log, nextAttemptAt: next.toISOString() }, 'webhook action delivery failed; will retry');
    return settle(await scheduleRetry(ctx.db, row.id, lease, next, error), 'retry');
  }
  ctx.log.warn(log, 'webhook action delivery failed; giving up');
  return settle(await markGivenUp(ctx.db, row.id, lease, now, error), 'given_up');
}

/**
 * When the event happened: the run's updated_at in the snapshot, written with the service clock by the same
 * statement that queued the row (outbox.created_at is the database's own now()).
 */
function eventTime(row: ClaimedDelivery): Date {
  const at = typeof row.snapshot.updated_at === 'string' ? new Date(row.snapshot.updated_at) : null;
  return at && !Number.isNaN(at.getTime()) ? at : new Date(row.created_at);
}

/** A settling write that found its lease taken over means another worker owns the row now. */
function settle(written: boolean, outcome: DeliveryOutcome): DeliveryOutcome {
  return written ? outcome : 'superseded';
}
