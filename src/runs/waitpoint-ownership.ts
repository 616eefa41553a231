// Whose wait a waitpoint token ends (issue 12): `/waitpoint` completes the token the task reported in its `waiting`
// callback with the organization's runtime key, so a task holding one agent's key could report another run's token
// and have the service resume that run. The token is completed only when what the runtime says of it fits the run:
// - n8n: the resume URL names an execution; it must be the run's own when the run knows it, and otherwise an
//   execution of the agent's workflow (run-ownership.ts, the check polls, alerts and cancel make);
// - Trigger.dev: a token tagged `ars_run:<deployment>:<run>` (waitpointTag) must carry this run's tag. An untagged
//   token says nothing and is completed as before (a task in the same project holds that project's key anyway).
// Pure: the adapters report what the runtime said (WaitpointState.resumes).
import type { WaitpointState } from '../runtimes/runtime-adapter.ts';
import { belongsTo } from './run-ownership.ts';

export interface WaitingRun {
  externalRunId: string | null;
  /** The agent's task or workflow path. */
  target: string | null;
  /** This run's own tag at a task runtime (waitpointTag). */
  runTag: string;
}

/** Why the token is not this run's (the 409's message); null when nothing says it belongs elsewhere. */
export function foreignTokenReason(run: WaitingRun, resumes: WaitpointState['resumes']): string | null {
  if (!resumes) return null;
  const { externalRunId, owner, runTags } = resumes;
  if (runTags && runTags.length > 0 && !runTags.includes(run.runTag)) {
    return 'the waitpoint token was created for another run (its ars_run tag is not this run\'s)';
  }
  if (externalRunId === undefined) return null;
  if (run.externalRunId !== null) {
    return externalRunId === run.externalRunId ? null : `the waitpoint token resumes execution ${JSON.stringify(externalRunId)}, not this run's execution ${JSON.stringify(run.externalRunId)}`;
  }
  if (owner === undefined || owner === null) return null;
  return belongsTo(run.target, owner) ? null : `the waitpoint token resumes execution ${JSON.stringify(externalRunId)} of another workflow, not one serving this agent's webhook path`;
}
