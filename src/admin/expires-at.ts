// OAuth `expires_at` on a connection: an ISO 8601 timestamp with a zone, or epoch seconds (what token endpoints
// and most SDKs hand out). Epoch milliseconds are refused rather than read as a date thousands of years away.
import { errors } from '../errors.ts';
import { parseTimestamp, TIMESTAMP_RULE } from '../lib/timestamps.ts';

const MAX_EPOCH_SECONDS = 99_999_999_999; // year 5138: anything larger is milliseconds by mistake

export function parseExpiresAt(value: unknown): Date {
  if (typeof value === 'number') {
    if (!Number.isInteger(value) || value < 0 || value > MAX_EPOCH_SECONDS) {
      throw errors.invalid('body.expires_at', 'must be an ISO 8601 timestamp or whole epoch seconds');
    }
    return new Date(value * 1000);
  }
  const date = parseTimestamp(value);
  if (!date) throw errors.invalid('body.expires_at', `${TIMESTAMP_RULE}, or whole epoch seconds`);
  return date;
}
