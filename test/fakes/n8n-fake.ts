// An n8n instance at the network boundary, as runtimes.md describes it (⚠ parts included): production webhooks
// held until the test's "workflow" answers, the Respond-to-Webhook answer shapes, the executions API, the stop
// endpoint of 2.41.1 (or its absence on 2.8.4) and resume URLs.
import { randomBytes } from 'node:crypto';
import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FakeHttpServer, type RecordedRequest } from './fake-http-server.ts';

export type N8nExecutionStatus = 'new' | 'running' | 'waiting' | 'success' | 'error' | 'crashed' | 'canceled' | 'unknown';

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

export interface FakeN8nExecution {
  id: string;
  workflowPath: string;
  status: N8nExecutionStatus;
  startedAt: Date;
  stoppedAt?: Date;
  runData: Record<string, Array<Record<string, unknown>>>;
  lastNodeExecuted?: string;
  error?: { message: string; stack?: string };
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

const CSP = 'sandbox allow-downloads allow-forms allow-modals allow-orientation-lock allow-pointer-lock allow-popups allow-presentation allow-scripts allow-top-navigation-by-user-activation';
const TERMINAL = new Set<N8nExecutionStatus>(['success', 'error', 'crashed', 'canceled']);

export interface N8nFakeOptions {
  apiKey?: string;
  /** true: 2.41.1 (stop answers 200, the held call gets 500 "cancelled manually"); false: 2.8.4 (404). */
  stopEndpoint?: boolean;
}

export class N8nFake extends FakeHttpServer {
  readonly apiKey: string;
  stopEndpoint: boolean;
  readonly executions = new Map<string, FakeN8nExecution>();
  readonly #workflows = new Map<string, N8nWorkflow>();
  #nextId = 1000;

  constructor(opts: N8nFakeOptions = {}) {
    super();
    this.apiKey = opts.apiKey ?? `n8n_api_${randomBytes(12).toString('hex')}`;
    this.stopEndpoint = opts.stopEndpoint ?? true;
  }

  /** Activates a workflow whose Webhook node listens on POST /webhook/{path}. */
  registerWorkflow(path: string, workflow: N8nWorkflow): void {
    this.#workflows.set(path.replace(/^\/+/, ''), workflow);
  }

  unregisterWorkflow(path: string): void {
    this.#workflows.delete(path.replace(/^\/+/, ''));
  }

  execution(id: string): FakeN8nExecution {
    const ex = this.executions.get(id);
    if (!ex) throw new Error(`fake n8n: no execution ${id}`);
    return ex;
  }

  /** An execution that no webhook started (status polling tests). */
  createExecution(patch: Partial<FakeN8nExecution> = {}): FakeN8nExecution {
    const ex = this.#newExecution(patch.workflowPath ?? 'none');
    return Object.assign(ex, patch);
  }

  setExecution(id: string, patch: Partial<FakeN8nExecution>): FakeN8nExecution {
    return Object.assign(this.execution(id), patch);
  }

  resumeUrl(executionId: string): string {
    return `${this.url}/webhook-waiting/${executionId}`;
  }

  webhookCalls(path?: string): RecordedRequest[] {
    return this.requestsTo(path === undefined ? '/webhook/' : `/webhook/${path}`, 'POST').filter((r) => !r.path.startsWith('/webhook-waiting/'));
  }

  resumeCalls(): RecordedRequest[] {
    return this.requestsTo('/webhook-waiting/', 'POST');
  }

  protected override commonHeaders(): Record<string, string> {
    return { 'content-security-policy': CSP };
  }

  protected override async handle(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): Promise<void> {
    let m: RegExpExecArray | null;
    if (req.method === 'POST' && (m = /^\/webhook-waiting\/([^/]+)/.exec(rec.path))) return this.#resume(res, rec, m[1]!);
    if (req.method === 'POST' && (m = /^\/webhook\/(.+)$/.exec(rec.path))) return this.#webhook(req, res, rec, decodeURIComponent(m[1]!));
    if ((m = /^\/api\/v1\/executions\/([^/]+)(\/stop)?$/.exec(rec.path))) {
      if (rec.headers['x-n8n-api-key'] !== this.apiKey) return this.sendJson(res, 401, { message: 'unauthorized' });
      if (m[2] && req.method === 'POST') return this.#stop(res, m[1]!);
      const ex = this.executions.get(m[1]!);
      if (req.method !== 'GET' || !ex) return this.sendJson(res, 404, { message: 'Not Found' });
      return this.sendJson(res, 200, this.#executionJson(ex, rec.query.get('includeData') === 'true'));
    }
    this.sendJson(res, 404, { code: 404, message: 'The requested webhook was not registered.' });
  }

  async #webhook(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, path: string): Promise<void> {
    const workflow = this.#workflows.get(path);
    if (!workflow) {
      return this.sendJson(res, 404, {
        code: 404,
        message: `The requested webhook "POST ${path}" is not registered.`,
        hint: 'The workflow must be active for a production URL to run successfully.',
      });
    }
    const ex = this.#newExecution(path);
    const gone = (): void => {
      if (!res.writableFinished) ex.clientGone = true;
    };
    // The caller may have hung up while the body was still being read, before this listener existed.
    if (req.socket.destroyed) gone();
    else res.on('close', gone);
    ex.runData.Webhook = [{ startTime: Date.now(), executionTime: 1, executionStatus: 'success', data: { main: [[{ json: { body: rec.body } }]] } }];
    const ctx: N8nWorkflowContext = {
      execution: ex, body: rec.body, headers: req.headers, resumeUrl: this.resumeUrl(ex.id), signal: ex.abort.signal,
      waitForResume: () => new Promise((resolve) => {
        ex.status = 'waiting';
        ex.resumeWaiter = resolve;
      }),
    };
    const stopped = new Promise<null>((resolve) => ex.abort.signal.addEventListener('abort', () => resolve(null), { once: true }));
    const run = async (): Promise<N8nAnswer> => {
      const answer = typeof workflow === 'function' ? await workflow(ctx) : workflow;
      if (answer.delayMs) await new Promise((r) => setTimeout(r, answer.delayMs));
      return answer.never ? new Promise<N8nAnswer>(() => {}) : answer;
    };
    const answer = await Promise.race([run(), stopped]);
    if (answer === null) {
      // Stopped through the API (2.41.1): the held call learns it this way.
      return this.sendJson(res, 500, { code: 0, message: 'The execution was cancelled manually' });
    }
    await this.#respond(res, ex, answer);
  }

  async #respond(res: ServerResponse, ex: FakeN8nExecution, a: N8nAnswer): Promise<void> {
    const status = a.status ?? 200;
    const headers: Record<string, string> = { ...this.commonHeaders(), ...(a.executionIdHeader ? { 'x-n8n-execution-id': ex.id } : {}) };
    const hasBody = a.json !== undefined || a.text !== undefined || a.binary !== undefined;
    if (!TERMINAL.has(ex.status)) {
      ex.status = a.executionStatus ?? (status < 300 && hasBody ? 'success' : 'error');
      ex.stoppedAt = new Date();
    }
    if (a.json !== undefined) {
      ex.runData['Respond to Webhook'] = [{ startTime: Date.now(), executionTime: 1, executionStatus: 'success', data: { main: [[{ json: a.json }]] } }];
      ex.lastNodeExecuted = 'Respond to Webhook';
    }
    if (ex.status === 'error' && !ex.error) ex.error = { message: 'Error in workflow' };
    ex.answered = true;
    if (a.binary) {
      const b = a.binary;
      res.writeHead(status, { ...headers, 'content-type': b.contentType, ...(b.inMemory ? { 'content-length': String(b.size) } : {}), ...a.headers });
      await pipeline(Readable.from(generate(b, ex)), res).catch(() => undefined);
      return;
    }
    const text = a.json !== undefined ? JSON.stringify(a.json) : (a.text ?? '');
    const type = a.json !== undefined ? 'application/json; charset=utf-8' : 'text/plain; charset=utf-8';
    res.writeHead(status, { ...headers, ...(text ? { 'content-type': type } : {}), 'content-length': String(Buffer.byteLength(text)), ...a.headers });
    res.end(text);
  }

  #stop(res: ServerResponse, id: string): void {
    if (!this.stopEndpoint) return this.sendJson(res, 404, { message: 'not found' });
    const ex = this.executions.get(id);
    if (!ex) return this.sendJson(res, 404, { message: 'Not Found' });
    if (TERMINAL.has(ex.status)) return this.sendJson(res, 409, { message: `Execution ${id} is not running` });
    Object.assign(ex, { status: 'canceled', stoppedAt: new Date() });
    ex.abort.abort();
    this.sendJson(res, 200, this.#executionJson(ex, false));
  }

  #resume(res: ServerResponse, rec: RecordedRequest, id: string): void {
    const ex = this.executions.get(id);
    if (!ex) return this.sendJson(res, 404, { code: 404, message: `The execution "${id}" does not exist.` });
    if (ex.status !== 'waiting' || !ex.resumeWaiter) {
      const why = TERMINAL.has(ex.status) ? 'has finished already' : 'is running already';
      return this.sendJson(res, 409, { code: 409, message: `The execution "${id}" ${why}.` });
    }
    ex.status = 'running';
    const waiter = ex.resumeWaiter;
    ex.resumeWaiter = undefined;
    waiter(rec.body);
    this.sendJson(res, 200, { message: 'Workflow was started' });
  }

  #newExecution(workflowPath: string): FakeN8nExecution {
    const ex: FakeN8nExecution = {
      id: String(this.#nextId++), workflowPath, status: 'running', startedAt: new Date(), runData: {},
      clientGone: false, bytesSent: 0, answered: false, abort: new AbortController(),
    };
    this.executions.set(ex.id, ex);
    return ex;
  }

  #executionJson(ex: FakeN8nExecution, includeData: boolean): Record<string, unknown> {
    return {
      id: Number(ex.id), finished: ex.status === 'success', mode: 'webhook', retryOf: null, retrySuccessId: null,
      startedAt: ex.startedAt.toISOString(), stoppedAt: ex.stoppedAt?.toISOString() ?? null,
      workflowId: `wf_${ex.workflowPath}`, waitTill: null, customData: {}, status: ex.status,
      ...(includeData ? { data: { startData: {}, resultData: { runData: ex.runData, lastNodeExecuted: ex.lastNodeExecuted, error: ex.error } } } : {}),
    };
  }
}

async function* generate(b: N8nBinary, ex: FakeN8nExecution): AsyncGenerator<Buffer> {
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
