// Spec 4.8: a running task reports progress, output, completion, failure and pauses. Every status change is one
// guarded transition (run-states.ts): the first terminal write wins (spec part 1), the same terminal status again
// is a silent no-op, anything else after a terminal state is backward (409, spec part 3 rule 1).
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import { findRun, type RunRow } from './runs-repo.ts';
import { countedTransition, recordIntermediateOutput, type TransitionResult } from './run-transitions.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import type { RunStatus } from './run-states.ts';

export interface CallbackError {
  name?: string;
  message?: string;
  stack?: string;
}

export type CallbackRequest =
  | { type: 'started' }
  | {
      type: 'output';
      outcome: 'intermediate' | 'completed' | 'failed';
      output?: object;
      /** Already filtered: a non-negative integer, or null to keep the stored value (spec 4.8). */
      outputs: number | null;
      error?: CallbackError; // present when outcome is 'failed'
    }
  | { type: 'waiting'; tokenId: string; description: string; url: string | null; output: object | null };

export type CallbackResult =
  | { kind: 'ok' }
  | { kind: 'not_found' }
  | { kind: 'backward'; run: RunRow; to: RunStatus } // 409
  | { kind: 'waitpoints_unsupported'; run: RunRow }; // 409

/** Applies one callback to run `runId` of `agent`; a run of another agent is not found (spec 4.8: 404). */
export async function applyCallback(
  ctx: AppContext,
  agent: AgentRow,
  runId: number,
  cb: CallbackRequest,
  /** This request's rate-limit count, made by the run's write (spec 8.1; nothing is written over the limit). */
  guard: RateGuard | null = null,
): Promise<CallbackResult | OverLimit> {
  const now = ctx.clock.now();
  let to: RunStatus;
  let result: TransitionResult | OverLimit;
  switch (cb.type) {
    case 'started':
      to = 'running';
      result = await countedTransition(ctx.db, guard, { runId, event: 'started', to, now, patch: {}, agentId: agent.id, via: 'callback' });
      break;
    case 'output': {
      const patch = { outputData: cb.output, outputs: cb.outputs };
      if (cb.outcome === 'intermediate') {
        to = 'running';
        const recorded = await recordIntermediateOutput(ctx.db, runId, now, patch, { agentId: agent.id, guard });
        if (recorded.kind === 'applied') {
          ctx.runWatch.publish(recorded.run.id, recorded.run.status);
          return { kind: 'ok' };
        }
        result = recorded;
      } else {
        to = cb.outcome;
        // A wait here on this run can start reading the task's return value while this write commits (spec 4.2).
        if (to === 'completed') ctx.runWatch.announceCompletion(runId);
        result = await countedTransition(ctx.db, guard, {
          runId, event: 'terminal', to, now, patch: cb.outcome === 'failed' ? { ...patch, error: cb.error } : patch, agentId: agent.id, via: 'callback',
        });
      }
      break;
    }
    case 'waiting': {
      // Spec 4.8 "only for runtimes that implement waitpoints": an unknown run is still a 404 first.
      const run = await findRun(ctx.db, runId);
      if (!run || run.agent_id !== agent.id) return { kind: 'not_found' };
      if (!(await supportsWaitpoints(ctx, agent))) return { kind: 'waitpoints_unsupported', run };
      to = 'waiting';
      const waitState = { tokenId: cb.tokenId, description: cb.description, url: cb.url, output: cb.output };
      result = await countedTransition(ctx.db, guard, { runId, event: 'waiting', to, now, patch: { waitState }, agentId: agent.id, via: 'callback' });
      break;
    }
  }
  switch (result.kind) {
    case 'over_limit':
      return result;
    case 'applied':
      ctx.runWatch.publishRun(result.run);
      ctx.metrics.transitioned('callback', result);
      return { kind: 'ok' };
    case 'noop':
      return { kind: 'ok' };
    case 'backward':
      return { kind: 'backward', run: result.run, to };
    case 'not_found':
      return { kind: 'not_found' };
  }
}

/** An agent without a runtime (standalone) has no waitpoints to complete; otherwise its adapter says. */
async function supportsWaitpoints(ctx: AppContext, agent: AgentRow): Promise<boolean> {
  if (agent.runtime_id === null) return false;
  const runtime = await ctx.agents.runtime(agent.runtime_id);
  return runtime !== null && ctx.runtimes.get(runtime.kind).supportsWaitpoints;
}
