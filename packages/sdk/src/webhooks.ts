// `@agent-run-service/sdk/webhooks`, the receiving side of webhook actions (spec part 6): the service signs each
// delivery per Standard Webhooks (standardwebhooks.com): HMAC-SHA256 of `${webhook-id}.${webhook-timestamp}.${raw
// body}` under the base64 key after `whsec_`, sent as space-separated `v1,<base64>` signatures. Its own entry point
// because it needs node:crypto: the root entry stays free of Node built-ins for browser and edge bundles.
import { createHmac, timingSafeEqual } from 'node:crypto';
import type { EventRun, WebhookEvent } from './api-types.ts';

export type { EventRun, WebhookEvent } from './api-types.ts';

export interface WebhookAction {
  /** `webhook-id`: the same on every retry of one event, so it is the key to deduplicate on. */
  id: string;
  run: EventRun;
  output: unknown;
  /** The whole body: `waiting` events add `run_url` and `waiting`. */
  body: WebhookEvent;
}

/**
 * Why a delivery was refused: `headers` missing, `timestamp` outside the window, no matching `signature` (answer
 * 401: not from the service, or replayed), or a genuine `body` that is not an event (answer 400).
 */
export type VerificationFailure = 'headers' | 'timestamp' | 'signature' | 'body';

export class WebhookVerificationError extends Error {
  override readonly name = 'WebhookVerificationError';
  constructor(message: string, readonly reason: VerificationFailure) {
    super(message);
  }
}

export type HeaderSource = Headers | Record<string, string | string[] | undefined>;

export interface VerifyOptions {
  /** How far the signed timestamp may be from `now`, either way: the replay window (default 300 s). */
  toleranceSeconds?: number;
  now?: Date;
}

/**
 * Verifies one delivery and returns its `{run, output}`, or throws WebhookVerificationError. `rawBody` must be the
 * exact bytes received: JSON parsed and serialised again no longer matches the signature.
 */
export function verifyWebhookAction(secret: string, headers: HeaderSource, rawBody: string | Uint8Array, opts: VerifyOptions = {}): WebhookAction {
  const body = typeof rawBody === 'string' ? rawBody : new TextDecoder().decode(rawBody);
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestamp || !signatures) throw new WebhookVerificationError('missing webhook-id, webhook-timestamp or webhook-signature', 'headers');
  const now = Math.floor((opts.now ?? new Date()).getTime() / 1000);
  if (!/^\d{1,15}$/.test(timestamp) || Math.abs(now - Number(timestamp)) > (opts.toleranceSeconds ?? 300)) {
    throw new WebhookVerificationError('webhook-timestamp outside the tolerance window', 'timestamp');
  }
  const expected = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest();
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const candidate = Buffer.from(value, 'base64');
    // Every candidate is compared, in constant time, so timing says nothing about which one nearly matched.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  if (!matched) throw new WebhookVerificationError('no matching signature', 'signature');
  const event = parseEvent(body);
  if (!event) throw new WebhookVerificationError('signed body is not {run, output}', 'body');
  return { id, run: event.run, output: event.output ?? null, body: event };
}

function parseEvent(body: string): WebhookEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body);
  } catch {
    return null;
  }
  if (parsed === null || typeof parsed !== 'object' || !('run' in parsed)) return null;
  const run = (parsed as { run: unknown }).run;
  return run !== null && typeof run === 'object' && Number.isSafeInteger((run as { runId?: unknown }).runId) ? (parsed as WebhookEvent) : null;
}

function signingKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  // Buffer.from skips invalid base64 silently, which would turn a typo into another (weaker) key.
  if (!/^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/.test(encoded) || encoded === '') {
    throw new TypeError('the signing secret must be whsec_<base64>');
  }
  return Buffer.from(encoded, 'base64');
}

function header(headers: HeaderSource, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() === name) return Array.isArray(value) ? value.join(' ') : value;
  }
  return undefined;
}
