// Whose run a runtime run is (issue 12 finding 3, decisions.md "Runtimes"): the service acts on a runtime run — applies
// its poll result, lets its alert end a run, cancels it — only for an agent whose target the run ran: Trigger.dev,
// its `taskIdentifier` is the agent's task; n8n, the workflow the execution ran has a Webhook node answering POST on
// the agent's path. Any external id is accepted at /register, so without this an agent could adopt, end or cancel
// another agent's runs with the organization's runtime key. Pure: the adapters report the owner.
import type { RemoteOwner } from '../runtimes/runtime-adapter.ts';

export function belongsTo(target: string | null, owner: RemoteOwner | null): boolean {
  if (target === null || owner === null) return false;
  if ('taskIdentifier' in owner) return owner.taskIdentifier === target;
  return owner.webhookPaths.includes(target.replace(/^\/+|\/+$/g, ''));
}

/** Why the runtime run is not the agent's (the run's error, the log, the audit); null when it is. */
export function foreignRunReason(target: string | null, owner: RemoteOwner | null, externalRunId: string): string | null {
  if (belongsTo(target, owner)) return null;
  const id = JSON.stringify(externalRunId);
  if (owner === null) return `the runtime did not say which task or workflow its run ${id} belongs to, so it is not taken as this agent's`;
  if (target === null) return `the runtime run ${id} cannot be this agent's: the agent has no task or workflow at the runtime`;
  return 'taskIdentifier' in owner
    ? `the runtime run ${id} belongs to another task, not to this agent's task ${JSON.stringify(target)}`
    : `the runtime run ${id} belongs to another workflow, not to one serving this agent's webhook path ${JSON.stringify(target)}`;
}
