// What a test's n8n workflow is made of: the Respond-to-Webhook answers it gives (runtimes.md "n8n" shapes), the
// execution record the fake keeps for it, and the alert an n8n error workflow sends. Used by n8n-fake.ts.
import type { IncomingHttpHeaders } from 'node:http';
import type { N8nExecutionFields, N8nExecutionStatus } from './n8n-public-api.ts';

/** A file answer generated on the fly (never held in memory), so 1 GiB downloads cost no memory. */
export interface N8nBinary {
  contentType: string;
  size: number;
  /** n8n sends content-length only when the binary is held in memory; otherwise the answer is chunked (⚠). */
  inMemory?: boolean;
  fillByte?: number;
  chunkSize?: number; // default 64 KiB
}

/** What the workflow's Respond to Webhook node sends. No field set at all means an empty body. */
export interface N8nAnswer {
  status?: number; // default 200
  headers?: Record<string, string>; // e.g. content-disposition: only when the author adds it (⚠)
  json?: unknown;
  text?: string;
  binary?: N8nBinary;
  /** Adds `x-n8n-execution-id`, as the documented workflow contract asks authors to. */
  executionIdHeader?: boolean;
  delayMs?: number;
  /** The workflow never reaches a Respond node and never ends (until stopped). */
  never?: boolean;
  /** Recorded on the execution once answered. Default: success for 2xx with a body, error otherwise. */
  executionStatus?: N8nExecutionStatus;
}

export interface N8nWorkflowContext {
  execution: FakeN8nExecution;
  body: unknown;
  headers: IncomingHttpHeaders;
  resumeUrl: string;
  /** Aborted when the execution is stopped through the API. */
  signal: AbortSignal;
  /** Puts the execution in `waiting` until something POSTs its resume URL; resolves with that body. */
  waitForResume(): Promise<unknown>;
}

export type N8nWorkflow = N8nAnswer | ((ctx: N8nWorkflowContext) => N8nAnswer | Promise<N8nAnswer>);

export interface FakeN8nExecution extends N8nExecutionFields {
  workflowPath: string;
  /** The caller hung up before the answer was complete. */
  clientGone: boolean;
  /** Bytes of a binary answer handed to the socket so far (backpressure tests). */
  bytesSent: number;
  answered: boolean;
  abort: AbortController;
  resumeWaiter?: (body: unknown) => void;
}

export const n8nAnswers = {
  /** n8n 2.8.4 (back to ~1.100): an error before the Respond node, or no Respond node at all. */
  emptyOk: (): N8nAnswer => ({ status: 200, executionStatus: 'error' }),
  /** n8n 2.41.1: an error before the Respond node. */
  errorInWorkflow: (): N8nAnswer => ({ status: 500, json: { message: 'Error in workflow' }, executionStatus: 'error' }),
  /** The workflow's own execution timeout. */
  timedOut: (): N8nAnswer => ({ status: 500, json: { code: 0, message: 'The execution was cancelled because it timed out' }, executionStatus: 'canceled' }),
  never: (): N8nAnswer => ({ never: true }),
};

export async function* generateBinary(b: N8nBinary, ex: FakeN8nExecution): AsyncGenerator<Buffer> {
  // One buffer reused for every chunk: its bytes never change, so queued writes may share it.
  const chunk = Buffer.alloc(Math.min(b.chunkSize ?? 64 * 1024, Math.max(b.size, 1)), b.fillByte ?? 0x61);
  let left = b.size;
  while (left > 0) {
    const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
    left -= part.length;
    ex.bytesSent += part.length;
    yield part;
  }
}

/** The body an n8n error workflow (Error Trigger → HTTP Request) POSTs to the service's alert endpoint. */
export function n8nErrorWorkflowAlert(opts: {
  alertSecret: string; executionId: string; baseUrl?: string; message?: string; workflowId?: string; workflowName?: string; lastNodeExecuted?: string;
}): { body: string; headers: Record<string, string>; payload: Record<string, unknown> } {
  const message = opts.message ?? 'Error in workflow';
  const payload = {
    execution: {
      id: opts.executionId,
      url: `${opts.baseUrl ?? 'http://n8n.local'}/workflow/${opts.workflowId ?? 'wf1'}/executions/${opts.executionId}`,
      error: { message, stack: `NodeOperationError: ${message}\n    at Code.execute` },
      lastNodeExecuted: opts.lastNodeExecuted ?? 'Code',
      mode: 'webhook',
    },
    workflow: { id: opts.workflowId ?? 'wf1', name: opts.workflowName ?? 'Agent workflow' },
  };
  const body = JSON.stringify(payload);
  return { body, payload, headers: { 'content-type': 'application/json', authorization: `Bearer ${opts.alertSecret}` } };
}
