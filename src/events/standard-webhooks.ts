// Standard Webhooks signing for outbound webhook actions (decisions.md "Events"; standardwebhooks.com).
// The signed content is `${id}.${unixSeconds}.${body}`, HMAC-SHA256 under the base64 key after `whsec_`.
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';

const SECRET_PREFIX = 'whsec_';
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

// A type alias (not an interface) so it can be passed wherever a plain header record is expected.
export type WebhookSignatureHeaders = {
  'webhook-id': string;
  'webhook-timestamp': string;
  'webhook-signature': string;
};

export interface SignWebhookInput {
  id: string;
  timestamp: Date;
  body: string;
  secret: string;
}

export function generateSigningSecret(): string {
  return SECRET_PREFIX + randomBytes(24).toString('base64');
}

export function signWebhook({ id, timestamp, body, secret }: SignWebhookInput): WebhookSignatureHeaders {
  const seconds = Math.floor(timestamp.getTime() / 1000);
  if (!Number.isSafeInteger(seconds)) throw new RangeError('timestamp must be a valid date');
  return {
    'webhook-id': id,
    'webhook-timestamp': String(seconds),
    'webhook-signature': `v1,${hmac(decodeSecret(secret), id, String(seconds), body)}`,
  };
}

/**
 * Receiver-side check: the id, timestamp and signature headers must be present, the timestamp within
 * `toleranceSeconds` of `now` either way (replay window), and one of the space-separated `v1,` signatures
 * must match. Header names are matched case-insensitively.
 */
export function verifyWebhook(
  headers: Record<string, string | string[] | undefined>,
  body: string,
  secret: string,
  now: Date,
  toleranceSeconds = 300,
): boolean {
  const id = header(headers, 'webhook-id');
  const timestamp = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (id === undefined || timestamp === undefined || signatures === undefined) return false;
  if (!/^\d{1,15}$/.test(timestamp)) return false;
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > toleranceSeconds) return false;

  const expected = Buffer.from(hmac(decodeSecret(secret), id, timestamp, body), 'base64');
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const comma = entry.indexOf(',');
    if (comma === -1 || entry.slice(0, comma) !== 'v1') continue;
    const candidate = Buffer.from(entry.slice(comma + 1), 'base64');
    // No early exit: every candidate is compared, in constant time for equal lengths.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  return matched;
}

function hmac(key: Buffer, id: string, seconds: string, body: string): string {
  return createHmac('sha256', key).update(`${id}.${seconds}.${body}`).digest('base64');
}

function decodeSecret(secret: string): Buffer {
  const encoded = secret.startsWith(SECRET_PREFIX) ? secret.slice(SECRET_PREFIX.length) : secret;
  // Buffer.from silently skips invalid base64, which would turn a typo into a different (weaker) key.
  if (encoded === '' || !BASE64.test(encoded)) throw new TypeError('signing secret must be whsec_<base64>');
  return Buffer.from(encoded, 'base64');
}

function header(headers: Record<string, string | string[] | undefined>, name: string): string | undefined {
  for (const [key, value] of Object.entries(headers)) {
    if (key.toLowerCase() !== name) continue;
    const text = Array.isArray(value) ? value.join(' ') : value;
    return text === undefined || text === '' ? undefined : text;
  }
  return undefined;
}
