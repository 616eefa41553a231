// SQL for completing waitpoints (spec 4.9). Status writes still go through runs-repo's `transition`; this file
// only takes the row lock that makes "is it still waiting on this very token?" and the move atomic.
import type { Queryable } from '../storage/db.ts';
import type { RunStatus } from './run-states.ts';
import type { WaitState } from './runs-repo.ts';

export interface LockedRunState {
  status: RunStatus;
  wait_state: WaitState | null;
}

/**
 * Locks one run of one agent until the surrounding transaction ends. Callers keep the transaction short (no
 * network calls inside it): on PGlite a transaction holds the only connection.
 */
export async function lockRunOfAgent(q: Queryable, runId: number, agentId: number): Promise<LockedRunState | null> {
  const { rows } = await q.query<LockedRunState>(
    'SELECT status, wait_state FROM runs WHERE id = $1 AND agent_id = $2 FOR UPDATE',
    [runId, agentId],
  );
  return rows[0] ?? null;
}
