// Finding, in n8n's records, the execution of a run whose held webhook call the service lost (decisions.md
// "Recovering lost runs"). n8n's public API lists workflows with their nodes and executions with their data; the
// execution of a run is the one whose Webhook node received this run's payload (runId and deploymentId).
// Measured on n8n 2.8.4 and 2.41.1: the plain list shows finished and waiting executions but never running ones
// (⚠); `status=running` lists those, with their start data (the Webhook node's input still on the stack).
// Pure functions over the API's JSON; the adapter makes the calls.
import type { RunMarker } from './runtime-adapter.ts';
import { postWebhooks, trimSlashes, type Execution, type WorkflowNode } from './n8n-mapping.ts';

/** Executions read per page of the list (each with its data: pages stay well under the answer cap). */
export const EXECUTIONS_PAGE = 20;
/** Pages read at most per workflow: a busy workflow's lost run older than this many executions is not found. */
export const EXECUTION_PAGES = 25;
/** The runtime's clock may run behind ours: executions started this long before the run are still looked at. */
const CLOCK_SKEW_MS = 60_000;

export interface WorkflowPage {
  /** `activeVersion` (2.x) is the published graph the live webhook serves; `nodes` may hold a newer draft. */
  data?: Array<{ id?: unknown; active?: unknown; nodes?: WorkflowNode[]; activeVersion?: { nodes?: WorkflowNode[] } | null }>;
  nextCursor?: unknown;
}

export interface ExecutionPage {
  data?: Execution[];
  nextCursor?: unknown;
}

/** A workflow whose Webhook node answers POST on the agent's path, and that node's name (its runData key). */
export interface WebhookWorkflow {
  workflowId: string;
  webhookNode: string;
}

/** The workflows of a page that listen on `target` (an agent's webhook path), active ones first. */
export function workflowsForPath(page: WorkflowPage, target: string): WebhookWorkflow[] {
  const wanted = trimSlashes(target);
  const found: Array<WebhookWorkflow & { active: boolean }> = [];
  for (const wf of page.data ?? []) {
    if (typeof wf.id !== 'string' && typeof wf.id !== 'number') continue;
    for (const hook of postWebhooks(wf.activeVersion?.nodes ?? wf.nodes ?? [])) {
      if (hook.path === wanted) found.push({ workflowId: String(wf.id), webhookNode: hook.node, active: wf.active === true });
    }
  }
  return found.sort((a, b) => Number(b.active) - Number(a.active)).map(({ active: _active, ...w }) => w);
}

export type ExecutionMatch = { kind: 'found'; execution: Execution } | { kind: 'older_than_run' } | { kind: 'not_here' };

/**
 * Looks through one page (newest first) for the execution that received this run's payload. `older_than_run`
 * says the page already reached executions started before the run existed: later pages cannot hold it.
 */
export function matchExecution(page: ExecutionPage, webhookNode: string, marker: RunMarker): ExecutionMatch {
  const oldest = marker.createdAt.getTime() - CLOCK_SKEW_MS;
  let reachedOlder = false;
  for (const ex of page.data ?? []) {
    const body = requestBody(ex, webhookNode);
    if (body && body.runId === marker.runId && body.deploymentId === marker.deploymentId) return { kind: 'found', execution: ex };
    const started = ex.startedAt ? Date.parse(ex.startedAt) : NaN;
    if (Number.isFinite(started) && started < oldest) reachedOlder = true;
  }
  return reachedOlder ? { kind: 'older_than_run' } : { kind: 'not_here' };
}

/**
 * The JSON the Webhook node received ({headers, params, query, body}): its first output item once it has run, or,
 * in a running execution (whose stored data is still the start data), its input on the node execution stack.
 */
function requestBody(ex: Execution, webhookNode: string): { runId?: unknown; deploymentId?: unknown } | null {
  const ran = ex.data?.resultData?.runData?.[webhookNode]?.[0]?.data?.main?.[0]?.[0]?.json as { body?: unknown } | undefined;
  const queued = ex.data?.executionData?.nodeExecutionStack?.find((s) => s.node?.name === webhookNode)?.data?.main?.[0]?.[0]?.json as
    | { body?: unknown }
    | undefined;
  const body = (ran ?? queued)?.body;
  return body !== null && typeof body === 'object' ? (body as { runId?: unknown; deploymentId?: unknown }) : null;
}

export function cursorOf(page: { nextCursor?: unknown }): string | null {
  return typeof page.nextCursor === 'string' && page.nextCursor !== '' ? page.nextCursor : null;
}
