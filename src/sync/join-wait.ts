// A retried synchronous start (Idempotency-Key; decisions.md "Idempotency keys") whose first request has not
// answered yet, or whose answer reached nobody: this caller is held on the SAME run, within its own window (8.3),
// and told what a trigger-and-wait would tell it. It starts nothing. A task run is polled as the first request
// polls it (its return value is the 200's output); a workflow run is only watched: its held call belongs to the
// first request, and a silent one is failed by that request's window, never by a retry's.
import type { AppContext } from '../context.ts';
import type { AgentRow } from '../agents/agents-repo.ts';
import type { RunHead } from '../runs/runs-repo.ts';
import { watchTerminal } from './await-run.ts';
import { awaitTaskRun, type SyncOutcome } from './sync-wait.ts';

export async function joinRunWait(ctx: AppContext, agent: AgentRow, run: RunHead, windowMs: number, signal?: AbortSignal): Promise<SyncOutcome> {
  const deadline = Date.now() + windowMs;
  const runtime = agent.runtime_id === null ? null : await ctx.agents.runtime(agent.runtime_id);
  const adapter = runtime ? ctx.runtimes.get(runtime.kind) : null;
  // Not `fresh`: the run may have ended already; the wait looks once it is subscribed.
  const wait = watchTerminal(ctx, run.id, { deadline, signal });
  // Without the runtime's id yet (the first request's trigger call is still out), there is nothing to poll.
  if (runtime && adapter && !adapter.supportsSyncInvoke && run.external_run_id) {
    return awaitTaskRun(ctx, { wait, run, agent, remote: { runtime, adapter }, deadline });
  }
  const res = await wait.outcome;
  switch (res.kind) {
    case 'terminal':
      return { kind: 'finished', run: res.run };
    case 'timeout':
      return { kind: 'timed_out', run: res.run };
    case 'unknown': // the database could not be read at the deadline: the run as the key's lookup found it
      return { kind: 'timed_out', run };
    case 'aborted':
      return { kind: 'caller_gone', runId: run.id };
    case 'not_found':
      throw new Error(`run ${run.id} vanished while waited for`);
  }
}
