// Spec 4.2 (trigger-and-wait) and zones.md `runs/wait`: start a run through the one start pipeline and hold the
// caller until it is terminal or the window (8.3) closes.
import type { AppContext } from '../context.ts';
import { beginRun, type StartRequest } from '../runs/begin-run.ts';
import type { KeyTaken } from '../runs/idempotency.ts';
import { waitWindowMs } from './wait-window.ts';
import { startAndAwait, type SyncOutcome } from './sync-wait.ts';

export interface WaitRequest extends StartRequest {
  /** The caller's window (spec 8.3), bounded by the agent's running timeout. */
  timeoutMs?: number;
  /** Fires when the caller disconnects: ends the wait, never the run. */
  callerGone?: AbortSignal;
}

export function triggerAndWait(ctx: AppContext, front: 'trigger_and_wait' | 'zone_wait', req: WaitRequest): Promise<SyncOutcome | KeyTaken> {
  const windowMs = waitWindowMs({ timeoutMs: req.timeoutMs, runningTimeoutMs: req.agent.running_timeout_ms });
  return beginRun(ctx, front, req, (args) => startAndAwait(ctx, args, { windowMs, signal: req.callerGone }));
}
