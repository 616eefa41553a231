// Spec 4.5: lifecycle reports of a standalone agent. The first report for an externalRunId creates the run in the
// status it names; later ones move it forward through the state machine's `ingest` event (forward only, a
// terminal status may be repeated but never changed — spec part 3 rule 1, else 409).
//
// The first call inserts and applies its fields in one transaction: a concurrent first call for the same
// externalRunId waits in insertRunOnce for that commit, then updates the complete row like any later call — so
// two first calls never both create, and neither sees a half-written run.
import type { AppContext } from '../context.ts';
import { outputsCount } from './run-output.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { insertRunOnce, type RunRow } from './runs-repo.ts';
import { transition, type RunPatch } from './run-transitions.ts';
import { isTerminal, type RunStatus } from './run-states.ts';
import { errors } from '../errors.ts';
import { attributableUser } from '../orgs/attribution.ts';

export type IngestStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

export interface IngestRequest {
  externalRunId: string;
  status: IngestStatus;
  startedAt?: Date;
  completedAt?: Date;
  durationMs?: number;
  output?: object;
  /** Anything; only a non-negative integer is kept (spec 2.2: other values are silently dropped). */
  outputs?: unknown;
  error?: string;
  metadata?: object;
  userId?: string | null;
}

export type IngestResult = { kind: 'created' | 'updated'; run: RunRow } | { kind: 'backward'; run: RunRow };

/** Spec 2.2 `outputs`: a non-negative integer, or null for "drop it silently". Safe integers only (bigint column). */
/** Throws 403 not_eligible for an agent that is not standalone; otherwise a result value (backward → 409). */
export async function ingestRun(ctx: AppContext, agent: AgentRow, req: IngestRequest): Promise<IngestResult> {
  if (agent.managed_by !== 'standalone') throw errors.notEligible('ingest is only for standalone agents (managed_by=standalone)');
  // Spec 4.5: userId counts only on the first call; a non-member is dropped silently.
  const createdBy = await attributableUser(ctx.db, agent.org_id, req.userId);
  const now = ctx.clock.now();
  let entered: RunStatus | null = null; // the status this report moved the run into, if it changed it
  const result = await ctx.db.transaction(async (tx): Promise<IngestResult> => {
    const { run, created } = await insertRunOnce(tx, {
      agentId: agent.id,
      externalRunId: req.externalRunId,
      status: req.status,
      source: 'ingest',
      now,
      // started_at is stamped once, at the first status past queued (spec 2.2).
      startedAt: req.status === 'queued' ? null : (req.startedAt ?? now),
      metadata: req.metadata ?? {},
      createdBy,
    });
    const moved = await transition(tx, run.id, 'ingest', req.status, now, patchOf(req, run), { agentId: agent.id, via: 'ingest' });
    if (moved.kind === 'not_found') throw new Error(`run ${run.id} vanished inside its own transaction`);
    if (moved.kind === 'backward') return { kind: 'backward', run: moved.run };
    if (created || run.status !== moved.run.status) entered = moved.run.status;
    return { kind: created ? 'created' : 'updated', run: moved.run };
  });
  if (result.kind !== 'backward') ctx.runWatch.publishRun(result.run);
  if (entered) {
    ctx.metrics.entered('ingest', entered);
    ctx.metrics.finished(result.run);
  }
  return result;
}

/**
 * The fields this report writes. Terminal-only fields (completedAt, durationMs) are ignored on other statuses;
 * repeating a terminal status without them keeps the stored ones rather than re-stamping "now".
 */
function patchOf(req: IngestRequest, current: RunRow): RunPatch {
  const patch: RunPatch = {};
  if (req.output !== undefined) patch.outputData = req.output;
  const outputs = outputsCount(req.outputs);
  if (outputs !== null) patch.outputs = outputs;
  if (req.error !== undefined) patch.error = req.error;
  if (req.metadata !== undefined) patch.metadata = req.metadata;
  if (req.startedAt !== undefined) patch.startedAt = req.startedAt; // coalesce: never resets an earlier start
  if (isTerminal(req.status)) {
    const repeat = current.status === req.status;
    const completedAt = req.completedAt ?? (repeat ? current.completed_at : null);
    if (completedAt) patch.completedAt = completedAt;
    const durationMs = req.durationMs !== undefined ? Math.round(req.durationMs) : repeat ? current.duration_ms : null;
    if (durationMs !== null) patch.durationMs = durationMs;
  }
  return patch;
}
