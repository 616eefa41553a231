// Pure translations of n8n's answers into the service's vocabulary (runtimes.md "n8n"), kept apart from the
// transport so each rule can be read and tested on its own.
import type { MappedStatus, RemoteOwner, RemoteStatus, RuntimeLogEntry, WorkflowAnswer } from './runtime-adapter.ts';
import { parseJson } from './http.ts';
import { runtimeDate } from '../lib/timestamps.ts';
import type { HeldAnswer } from './held-call.ts';

export const EXECUTION_ID_HEADER = 'x-n8n-execution-id';
export const EMPTY_ANSWER_ERROR = 'workflow answered with an empty body (no Respond to Webhook node ran?)';

/** runtimes.md: new → queued; running/waiting → running; success → completed; error/crashed → failed. */
const EXECUTION_STATUS: Record<string, MappedStatus | 'unknown'> = {
  new: 'queued',
  running: 'running',
  waiting: 'running',
  success: 'completed',
  error: 'failed',
  crashed: 'failed',
  canceled: 'cancelled',
  unknown: 'unknown',
};

const TERMINAL = new Set(['success', 'error', 'crashed', 'canceled']);

/** n8n answers these to a held call whose execution was stopped (2.41.1); both carry `code: 0`. */
const CANCELLED_MANUALLY = /cancell?ed manually/i;

/** The held webhook call's answer as a run result. Treats an empty 200 as a failed run, never as success. */
export function answerFromHeld(res: HeldAnswer): WorkflowAnswer {
  const externalRunId = res.headers[EXECUTION_ID_HEADER] || null;
  const base = { externalRunId, httpStatus: res.status };
  const text = res.body.toString('utf8');
  const parsed = parseJson(text);
  if (res.status >= 200 && res.status < 300) {
    if (text.trim() === '') return { ...base, status: 'failed', output: null, error: EMPTY_ANSWER_ERROR };
    if (!parsed.ok) {
      return { ...base, status: 'failed', output: null, error: 'workflow answered with a body that is not JSON' };
    }
    return { ...base, status: 'completed', output: parsed.value, error: null };
  }
  const message = parsed.ok ? messageOf(parsed.value) : null;
  if (message && CANCELLED_MANUALLY.test(message)) return { ...base, status: 'cancelled', output: null, error: message };
  const reason = message ?? (res.status >= 300 && res.status < 400 ? 'workflow answered with a redirect' : null);
  return { ...base, status: 'failed', output: null, error: reason ?? `workflow runtime answered HTTP ${res.status}` };
}

function messageOf(body: unknown): string | null {
  const m = (body as { message?: unknown } | null)?.message;
  return typeof m === 'string' && m !== '' ? m.slice(0, 500) : null;
}

interface NodeRun {
  startTime?: number;
  executionTime?: number;
  executionStatus?: string;
  error?: { message?: string };
  data?: { main?: Array<Array<{ json?: unknown }> | null> };
}

export type WorkflowNode = { name?: unknown; type?: unknown; parameters?: Record<string, unknown> };

const WEBHOOK_NODE = 'n8n-nodes-base.webhook';

export interface Execution {
  id?: number | string;
  workflowId?: number | string;
  /** With `includeData=true`: the graph the execution ran (n8n keeps a copy with every execution). */
  workflowData?: { id?: number | string; nodes?: WorkflowNode[] };
  status?: string;
  startedAt?: string | null;
  stoppedAt?: string | null;
  data?: {
    /** A running execution's stored start data: the nodes still to run, with their input. */
    executionData?: { nodeExecutionStack?: Array<{ node?: { name?: string }; data?: { main?: Array<Array<{ json?: unknown }> | null> } }> };
    resultData?: {
      runData?: Record<string, NodeRun[]>;
      lastNodeExecuted?: string;
      error?: { message?: string };
    };
  };
}

export function statusFromExecution(ex: Execution): RemoteStatus {
  const word = typeof ex.status === 'string' ? ex.status : 'unknown';
  const status = EXECUTION_STATUS[word] ?? 'unknown';
  const startedAt = runtimeDate(ex.startedAt);
  // A waiting execution has a stoppedAt too (it left memory); only a terminal one has really finished.
  const finishedAt = TERMINAL.has(word) ? runtimeDate(ex.stoppedAt) : null;
  const resultData = ex.data?.resultData;
  let error: string | null = null;
  if (status === 'failed') error = resultData?.error?.message?.slice(0, 500) ?? `n8n execution ended with status ${word}`;
  return {
    status,
    output: status === 'completed' ? lastNodeOutput(ex) : null,
    error,
    startedAt,
    finishedAt,
    durationMs: startedAt && finishedAt ? finishedAt.getTime() - startedAt.getTime() : null,
    runtimeStatus: word,
    owner: ownerOf(ex),
  };
}

/** The workflow the execution ran and the paths its Webhook nodes answer POST on; null without its graph. */
export function ownerOf(ex: Execution): RemoteOwner | null {
  const id = ex.workflowId ?? ex.workflowData?.id;
  const nodes = ex.workflowData?.nodes;
  if ((typeof id !== 'string' && typeof id !== 'number') || String(id) === '' || !Array.isArray(nodes)) return null;
  return { workflowId: String(id), webhookPaths: postWebhooks(nodes).map((w) => w.path) };
}

/**
 * The Webhook nodes of a graph that answer POST (the method the service calls), by node name, with their paths
 * without leading or trailing slashes. A node allowing several methods lists them in an array.
 */
export function postWebhooks(nodes: WorkflowNode[]): Array<{ node: string; path: string }> {
  const found: Array<{ node: string; path: string }> = [];
  for (const node of nodes) {
    const p = node.parameters ?? {};
    const methods = Array.isArray(p.httpMethod) ? p.httpMethod : [typeof p.httpMethod === 'string' ? p.httpMethod : 'GET'];
    const post = methods.some((m) => typeof m === 'string' && m.toUpperCase() === 'POST');
    if (node.type === WEBHOOK_NODE && typeof node.name === 'string' && typeof p.path === 'string' && post) {
      found.push({ node: node.name, path: trimSlashes(p.path) });
    }
  }
  return found;
}

export function trimSlashes(path: string): string {
  return path.replace(/^\/+|\/+$/g, '');
}

/**
 * Best effort: n8n does not store what the Respond node sent, so the output of a polled execution is the last
 * executed node's first output items (one item → its json, several → the list). Needs `includeData=true`.
 */
function lastNodeOutput(ex: Execution): unknown {
  const rd = ex.data?.resultData;
  const runs = rd?.lastNodeExecuted ? rd.runData?.[rd.lastNodeExecuted] : undefined;
  const items = runs?.[runs.length - 1]?.data?.main?.[0];
  if (!items || items.length === 0) return null;
  return items.length === 1 ? (items[0]?.json ?? null) : items.map((i) => i.json ?? null);
}

/** One entry per node run, in start order. */
export function logsFromExecution(ex: Execution): RuntimeLogEntry[] {
  const entries: Array<RuntimeLogEntry & { order: number }> = [];
  for (const [node, runs] of Object.entries(ex.data?.resultData?.runData ?? {})) {
    for (const run of runs ?? []) {
      const items = run.data?.main?.reduce((n, out) => n + (out?.length ?? 0), 0) ?? 0;
      const isError = run.executionStatus === 'error' || run.error !== undefined;
      const status = run.executionStatus ?? (isError ? 'error' : 'success');
      const detail = run.error?.message ? `: ${run.error.message.slice(0, 500)}` : '';
      entries.push({
        order: run.startTime ?? 0,
        time: typeof run.startTime === 'number' ? new Date(run.startTime).toISOString() : null,
        level: isError ? 'error' : 'info',
        message: `${node} ${status}, ${items} item(s)${detail}`,
        isError,
        durationMs: typeof run.executionTime === 'number' ? run.executionTime : null,
        node,
      });
    }
  }
  return entries.sort((a, b) => a.order - b.order).map(({ order: _order, ...e }) => e);
}


/**
 * The execution id inside a resume URL (`…/webhook-waiting/{id}[/suffix][?signature=…]`), when there is one. The
 * URL came from a callback: a malformed percent-escape means there is none (decodeURIComponent would throw).
 */
export function executionIdFromResumeUrl(url: URL): string | null {
  const m = /\/webhook-waiting\/([^/]+)/.exec(url.pathname);
  if (!m?.[1]) return null;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return null; // a malformed escape names no execution
  }
}
