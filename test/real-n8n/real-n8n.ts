// What the real-n8n suites share: the n8n they were pointed at (REAL_N8N_URL, REAL_N8N_API_KEY, REAL_N8N_VERSION;
// .ci/real-n8n.sh starts one per supported version with examples/n8n imported), n8n's public API, and the service
// as a real process with an organization and that n8n registered as its workflow runtime.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { eventually, startServiceOnRuntime, type ServiceOnRuntime, createPlatformAgent, type CreatedAgent } from '../faults/service-process.ts';

export type { CreatedAgent } from '../faults/service-process.ts';

export const N8N_URL = process.env.REAL_N8N_URL ?? '';
export const N8N_API_KEY = process.env.REAL_N8N_API_KEY ?? '';
export const VERSION = process.env.REAL_N8N_VERSION ?? 'unknown';
/** Without a running n8n the suites are skipped (describe.skipIf). */
export const NO_REAL_N8N = !N8N_URL || !N8N_API_KEY;

const EXAMPLES = path.resolve(import.meta.dirname, '../../examples/n8n');

/** One call to n8n's public API (`/api/v1/…`); a non-2xx answer throws with its body. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- black-box JSON, read field by field in the tests
export async function n8nApi<T = any>(method: string, apiPath: string, body?: unknown): Promise<T> {
  const res = await fetch(`${N8N_URL}/api/v1${apiPath}`, {
    method,
    headers: { 'x-n8n-api-key': N8N_API_KEY, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`n8n ${method} ${apiPath} -> ${res.status} ${text}`);
  return (text ? JSON.parse(text) : null) as T;
}

export interface N8nExecution {
  id: string;
  status: string;
  workflowId: string;
  data?: {
    resultData?: {
      runData?: Record<string, Array<{ data?: { main?: Array<Array<{ json: Record<string, unknown> }>> } }>>;
      /** Why the execution failed, and at which node. */
      error?: { message?: string; node?: { name?: string } };
    };
  };
}

export const n8nExecution = (id: string): Promise<N8nExecution> => n8nApi('GET', `/executions/${id}?includeData=true`);

/**
 * The execution once n8n has saved its end. A Respond to Webhook node answers (and the service's run ends) before
 * n8n writes the execution's final status: 2.41.1 shows it 'running' for a moment after the answer.
 */
export const settledExecution = (id: string): Promise<N8nExecution> =>
  eventually(() => n8nExecution(id), (e) => e.status !== 'running' && e.status !== 'new', 10_000);

/** The first item a node of an execution put out (its last run). */
export function nodeOutput(ex: N8nExecution, node: string): Record<string, unknown> | null {
  const runs = ex.data?.resultData?.runData?.[node];
  return runs?.[runs.length - 1]?.data?.main?.[0]?.[0]?.json ?? null;
}

/** The service as a process, with an organization and the real n8n as its workflow runtime. */
export type ServiceOnN8n = ServiceOnRuntime;

export function startServiceOnN8n(env: Record<string, string>, runtime: { alert_secret?: string } = {}): Promise<ServiceOnN8n> {
  return startServiceOnRuntime(env, { name: 'n8n', kind: 'workflow', base_url: N8N_URL, api_key: N8N_API_KEY, ...runtime });
}

/** A platform agent on the n8n runtime whose webhook path is `target`, as an admin creates it. */
export const createAgent = (s: ServiceOnN8n, name: string, target: string, fields: Record<string, unknown> = {}): Promise<CreatedAgent> =>
  createPlatformAgent(s.service, s, name, target, fields);

/** The workflow of examples/n8n/<file>, as exported. */
export function exampleWorkflow(file: string): {
  id: string;
  name: string;
  nodes: Array<{ name: string; type: string; parameters: Record<string, unknown>; credentials?: Record<string, { id: string; name: string }> }>;
  connections: unknown;
  settings: Record<string, unknown>;
} {
  return JSON.parse(readFileSync(path.join(EXAMPLES, file), 'utf8'));
}
