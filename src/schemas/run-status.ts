// The run's statuses as the contract names them (spec part 3): the vocabulary the answer schemas (responses.ts) and
// the state machine (runs/run-states.ts) share. Which status may follow which is the state machine's alone.

export const RUN_STATUSES = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'] as const;
export type RunStatus = (typeof RUN_STATUSES)[number];
export type TerminalStatus = 'completed' | 'failed' | 'cancelled';
export type ActiveStatus = 'queued' | 'running' | 'waiting';

export const ACTIVE_STATUSES: readonly ActiveStatus[] = ['queued', 'running', 'waiting'];
export const TERMINAL_STATUSES: readonly TerminalStatus[] = ['completed', 'failed', 'cancelled'];
