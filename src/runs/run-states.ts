// The run state machine (spec part 3). Every status write in the service asks this module which statuses it may
// move from, and run-transitions.ts turns that into one guarded UPDATE. Nothing else decides transitions.

import { ACTIVE_STATUSES, RUN_STATUSES, type RunStatus, type TerminalStatus } from '../schemas/run-status.ts';

// The vocabulary lives below every layer (schemas/); the runs code takes it from its state machine.
export { ACTIVE_STATUSES, RUN_STATUSES, type ActiveStatus, type RunStatus, type TerminalStatus } from '../schemas/run-status.ts';

export function isTerminal(status: RunStatus): status is TerminalStatus {
  switch (status) {
    case 'completed':
    case 'failed':
    case 'cancelled':
      return true;
    case 'queued':
    case 'running':
    case 'waiting':
      return false;
    default:
      return assertNever(status);
  }
}

/** Forward-only order: queued < running = waiting < terminal. `running` and `waiting` move both ways. */
function rank(status: RunStatus): number {
  switch (status) {
    case 'queued':
      return 0;
    case 'running':
    case 'waiting':
      return 1;
    case 'completed':
    case 'failed':
    case 'cancelled':
      return 2;
    default:
      return assertNever(status);
  }
}

/**
 * The events that move a run. Each names who asks, because the same target status has different sources:
 * a waitpoint resumes only a waiting run, a `started` callback only lifts a queued one.
 */
export type RunEvent =
  | 'started' // runtime picked the run up: callback `started`, first sign of life, poll says running
  | 'waiting' // callback `waiting` (spec 4.8)
  | 'resumed' // waitpoint completed (spec 4.9)
  | 'intermediate_output' // callback `output` without complete/failed
  | 'terminal' // callback, poll, alert, synchronous answer, timeout, cancel
  | 'no_sign_of_life' // spec part 3: a workflow runtime never answered nor called back within a sync wait window
  | 'ingest'; // spec 4.5: any status, forward only

/** Statuses a run may be in for `event` to move it to `to`. The guarded UPDATE uses exactly this list. */
export function allowedFrom(event: RunEvent, to?: RunStatus): readonly RunStatus[] {
  switch (event) {
    case 'started':
      return ['queued'];
    case 'waiting':
      // A waiting run may report a new token; a queued one has evidently started.
      return ['queued', 'running', 'waiting'];
    case 'resumed':
      return ['waiting'];
    case 'intermediate_output':
      return ACTIVE_STATUSES;
    case 'terminal':
      return ACTIVE_STATUSES;
    case 'no_sign_of_life':
      // decisions.md "the wait window": only a run still queued has shown no life; one that called back goes on.
      return ['queued'];
    case 'ingest': {
      if (!to) throw new Error('ingest needs a target status');
      // Same status updates the record; a terminal status may only be repeated, never changed (rule 1).
      return RUN_STATUSES.filter((from) => (isTerminal(from) ? from === to : rank(from) <= rank(to)));
    }
    default:
      return assertNever(event);
  }
}

/**
 * When a guarded UPDATE found the run in a status outside `allowedFrom`, this says what that means:
 * `noop` — the move is already done (a repeated `started`, or the same terminal status again), answer success;
 * `backward` — spec part 3 rule 1, answer 409.
 */
export function classifyRefusal(event: RunEvent, current: RunStatus, to: RunStatus): 'noop' | 'backward' {
  if (event === 'started' && (current === 'running' || current === 'waiting')) return 'noop';
  if (isTerminal(current) && current === to && event !== 'resumed') return 'noop';
  return 'backward';
}

function assertNever(value: never): never {
  throw new Error(`unhandled run status or event: ${String(value)}`);
}
