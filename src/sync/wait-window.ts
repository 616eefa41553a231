// Spec 8.3: how long a synchronous endpoint holds the caller. The window is the smallest of the caller's
// `timeoutMs` (default 60 s), the agent's Max run duration and a 5-minute platform ceiling.
import { Type } from 'typebox';

export const DEFAULT_WAIT_MS = 60_000;
export const WAIT_CEILING_MS = 300_000;

/**
 * `timeoutMs` in request bodies (spec 4.2, 4.3, zones): a positive whole number of milliseconds. 0, negatives
 * and fractions fail validation (400 or 422, as the endpoint reports validation failures); values above the
 * caps are accepted and capped, as 8.3 says.
 */
export const TimeoutMsSchema = Type.Integer({ minimum: 1 });

export function isValidTimeoutMs(value: unknown): value is number {
  return typeof value === 'number' && Number.isInteger(value) && value >= 1;
}

/** spec 8.3 for trigger-and-wait, trigger-and-download and the zone equivalents. */
export function waitWindowMs(args: { timeoutMs?: number; runningTimeoutMs: number }): number {
  return Math.max(1, Math.min(args.timeoutMs ?? DEFAULT_WAIT_MS, args.runningTimeoutMs, WAIT_CEILING_MS));
}

/** spec 8.3 / 4.7: webhook-and-wait has no `timeoutMs`; only the agent's running timeout and the ceiling. */
export function webhookWaitWindowMs(runningTimeoutMs: number): number {
  return Math.max(1, Math.min(runningTimeoutMs, WAIT_CEILING_MS));
}
