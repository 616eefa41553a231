// An n8n instance at the network boundary, as runtimes.md describes it (⚠ parts included) and as a real n8n
// 2.8.4 / 2.41.1 answered (test/fakes/n8n-captures/): production webhooks held until the test's "workflow"
// answers, the Respond-to-Webhook answer shapes, the public API (workflows, executions list and by id, stop on
// 2.41.1 only), resume URLs. Executions run to their end when the webhook caller hangs up, and the list hides
// executions n8n still holds in memory. Everything goes through the socket: the service may run in another process.
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { FakeHttpServer, type RecordedRequest } from './fake-http-server.ts';
import {
  executionJson, listExecutions, listWorkflows, TERMINAL, unauthorizedBody, uuidFor, workflowIdFor,
  type N8nVersion, type N8nWorkflowMeta,
} from './n8n-public-api.ts';
import { generateBinary, type FakeN8nExecution, type N8nAnswer, type N8nWorkflow, type N8nWorkflowContext } from './n8n-workflows.ts';

export type { N8nExecutionStatus, N8nVersion, N8nWebhookItem } from './n8n-public-api.ts';
export * from './n8n-workflows.ts';

const CSP = 'sandbox allow-downloads allow-forms allow-modals allow-orientation-lock allow-pointer-lock allow-popups allow-presentation allow-scripts allow-top-navigation-by-user-activation';

export interface N8nFakeOptions {
  apiKey?: string;
  /** Which real n8n to behave like (default 2.41.1). Sets stopEndpoint. */
  version?: N8nVersion;
  /** true: 2.41.1 (stop answers 200, the held call gets 500 "cancelled manually"); false: 2.8.4 (404). */
  stopEndpoint?: boolean;
}

export class N8nFake extends FakeHttpServer {
  readonly apiKey: string;
  /** The version switch: true behaves like 2.41.1, false like 2.8.4 (stop route, list rules, 401 bodies). */
  stopEndpoint: boolean;
  readonly executions = new Map<string, FakeN8nExecution>();
  readonly #workflows = new Map<string, { workflow: N8nWorkflow; meta: N8nWorkflowMeta }>();
  #nextId = 1000;

  constructor(opts: N8nFakeOptions = {}) {
    super();
    this.apiKey = opts.apiKey ?? `n8n_api_${randomBytes(12).toString('hex')}`;
    this.stopEndpoint = opts.stopEndpoint ?? (opts.version ? opts.version === '2.41.1' : true);
  }

  get version(): N8nVersion {
    return this.stopEndpoint ? '2.41.1' : '2.8.4';
  }

  set version(v: N8nVersion) {
    this.stopEndpoint = v === '2.41.1';
  }

  /**
   * Publishes a workflow whose Webhook node listens on POST /webhook/{path}; GET /api/v1/workflows lists it.
   * Returns its workflow id (16 characters derived from the path unless `opts.id` is given).
   */
  registerWorkflow(path: string, workflow: N8nWorkflow, opts: { id?: string; name?: string } = {}): string {
    const p = path.replace(/^\/+/, '');
    const id = opts.id ?? workflowIdFor(p);
    const old = this.#workflows.get(p)?.meta;
    const meta: N8nWorkflowMeta = old && !opts.id && !opts.name ? old : {
      id, name: opts.name ?? `Agent workflow ${p}`, path: p, webhookId: uuidFor(`${id}:hook`), versionId: uuidFor(`${id}:v1`), createdAt: new Date(),
    };
    this.#workflows.set(p, { workflow, meta });
    return meta.id;
  }

  /** The id of the workflow registered on `path` (or the one its executions would carry). */
  workflowId(path: string): string {
    const p = path.replace(/^\/+/, '');
    return this.#workflows.get(p)?.meta.id ?? workflowIdFor(p);
  }

  unregisterWorkflow(path: string): void {
    this.#workflows.delete(path.replace(/^\/+/, ''));
  }

  execution(id: string): FakeN8nExecution {
    const ex = this.executions.get(id);
    if (!ex) throw new Error(`fake n8n: no execution ${id}`);
    return ex;
  }

  /** An execution that no webhook started (status polling tests). In memory while new or running. */
  createExecution(patch: Partial<FakeN8nExecution> = {}): FakeN8nExecution {
    const ex = this.#newExecution(patch.workflowPath ?? 'none');
    const status = patch.status ?? ex.status;
    return Object.assign(ex, { inMemory: status === 'new' || status === 'running' }, patch);
  }

  /** Patches an execution; a terminal status also takes it out of memory unless the patch says otherwise. */
  setExecution(id: string, patch: Partial<FakeN8nExecution>): FakeN8nExecution {
    const ex = this.execution(id);
    if (patch.status && TERMINAL.has(patch.status) && patch.inMemory === undefined) ex.inMemory = false;
    return Object.assign(ex, patch);
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
    if (rec.path.startsWith('/api/v1/')) {
      const key = rec.headers['x-n8n-api-key'];
      if (key !== this.apiKey) return this.sendJson(res, 401, unauthorizedBody(this.version, key !== undefined));
      if (req.method === 'GET' && rec.path === '/api/v1/workflows') {
        const { status, body } = listWorkflows([...this.#workflows.values()].map((w) => w.meta), rec.query, this.version);
        return this.sendJson(res, status, body);
      }
      if (req.method === 'GET' && rec.path === '/api/v1/executions') {
        const all = [...this.executions.values()];
        const { status, body } = listExecutions(all, rec.query, this.version, (ex, includeData) => this.#json(ex, includeData, true));
        return this.sendJson(res, status, body);
      }
      if ((m = /^\/api\/v1\/executions\/([^/]+)(\/stop)?$/.exec(rec.path))) {
        if (m[2] && req.method === 'POST') return this.#stop(res, m[1]!);
        const ex = this.executions.get(m[1]!);
        if (req.method !== 'GET' || m[2] || !ex) return this.sendJson(res, 404, { message: 'Not Found' });
        return this.sendJson(res, 200, this.#json(ex, rec.query.get('includeData') === 'true', false));
      }
      return this.sendJson(res, 404, { message: 'not found' });
    }
    this.sendJson(res, 404, { code: 404, message: 'The requested webhook was not registered.' });
  }

  async #webhook(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest, path: string): Promise<void> {
    const workflow = this.#workflows.get(path)?.workflow;
    if (!workflow) {
      return this.sendJson(res, 404, {
        code: 404,
        message: `The requested webhook "POST ${path}" is not registered.`,
        hint: 'The workflow must be active for a production URL to run successfully.',
      });
    }
    const ex = this.#newExecution(path);
    ex.inMemory = true;
    // Hanging up does not stop the execution: n8n runs it to its end and saves it (seen on 2.8.4 and 2.41.1).
    const gone = (): void => {
      if (!res.writableFinished) ex.clientGone = true;
    };
    // The caller may have hung up while the body was still being read, before this listener existed.
    if (req.socket.destroyed) gone();
    else res.on('close', gone);
    ex.webhookItem = {
      headers: { ...req.headers }, params: {}, query: Object.fromEntries(rec.query), body: rec.body ?? {},
      webhookUrl: `${this.url}/webhook/${path}`, executionMode: 'production',
    };
    ex.runData.Webhook = [nodeRun(0, [], ex.webhookItem)];
    const ctx: N8nWorkflowContext = {
      execution: ex, body: rec.body, headers: req.headers, resumeUrl: this.resumeUrl(ex.id), signal: ex.abort.signal,
      waitForResume: () => new Promise((resolve) => {
        // A Wait node "on webhook call" parks the execution until the far future n8n uses for "indefinitely".
        Object.assign(ex, { status: 'waiting', waitTill: new Date('3000-01-01T00:00:00.000Z'), stoppedAt: new Date(), resumeWaiter: resolve });
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
    ex.inMemory = false;
    if (a.json !== undefined) {
      // The Respond node's output is its input item: here the answer (n8n stores not what it sent).
      ex.runData['Respond to Webhook'] = [nodeRun(Object.keys(ex.runData).length, [{ previousNode: 'Webhook', previousNodeOutput: 0, previousNodeRun: 0 }], a.json)];
      ex.lastNodeExecuted = 'Respond to Webhook';
    } else if (!ex.lastNodeExecuted && ex.runData.Webhook) {
      ex.lastNodeExecuted = 'Webhook';
    }
    if (ex.status === 'error' && !ex.error) ex.error = { message: 'Error in workflow' };
    ex.answered = true;
    if (a.binary) {
      const b = a.binary;
      res.writeHead(status, { ...headers, 'content-type': b.contentType, ...(b.inMemory ? { 'content-length': String(b.size) } : {}), ...a.headers });
      await pipeline(Readable.from(generateBinary(b, ex)), res).catch(() => undefined);
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
    if (!ex) return this.sendJson(res, 404, { message: 'Failed to find execution to stop' });
    if (ex.status !== 'running' && ex.status !== 'waiting' && ex.status !== 'new') {
      return this.sendJson(res, 409, { message: `Only running or waiting executions can be stopped and ${id} is currently ${ex.status}` });
    }
    Object.assign(ex, { status: 'canceled', stoppedAt: new Date(), inMemory: false });
    ex.abort.abort();
    this.sendJson(res, 200, { mode: 'webhook', startedAt: ex.startedAt.toISOString(), stoppedAt: ex.stoppedAt!.toISOString(), finished: false, status: 'canceled' });
  }

  #resume(res: ServerResponse, rec: RecordedRequest, id: string): void {
    const ex = this.executions.get(id);
    if (!ex) return this.sendJson(res, 404, { code: 404, message: `The execution "${id}" does not exist.` });
    if (ex.status !== 'waiting' || !ex.resumeWaiter) {
      const why = TERMINAL.has(ex.status) ? 'has finished already' : 'is running already';
      return this.sendJson(res, 409, { code: 409, message: `The execution "${id}" ${why}.` });
    }
    Object.assign(ex, { status: 'running', waitTill: undefined, stoppedAt: undefined });
    if (this.version === '2.8.4') ex.startedAt = new Date();
    const waiter = ex.resumeWaiter;
    ex.resumeWaiter = undefined;
    waiter(rec.body);
    this.sendJson(res, 200, { message: 'Workflow was started' });
  }

  #newExecution(workflowPath: string): FakeN8nExecution {
    const now = new Date();
    const ex: FakeN8nExecution = {
      id: String(this.#nextId++), workflowPath, workflowId: this.workflowId(workflowPath), status: 'running', createdAt: now,
      startedAt: now, runData: {}, inMemory: false, clientGone: false, bytesSent: 0, answered: false, abort: new AbortController(),
    };
    this.executions.set(ex.id, ex);
    return ex;
  }

  #json(ex: FakeN8nExecution, includeData: boolean, list: boolean): Record<string, unknown> {
    const p = ex.workflowPath;
    const meta = this.#workflows.get(p)?.meta ?? {
      id: ex.workflowId, name: `Agent workflow ${p}`, path: p, webhookId: uuidFor(`${ex.workflowId}:hook`), versionId: uuidFor(`${ex.workflowId}:v1`), createdAt: ex.createdAt,
    };
    return executionJson(ex, meta, { version: this.version, includeData, list });
  }
}

/** One entry of runData as n8n records a node's run: its output items, each with pairedItem. */
function nodeRun(executionIndex: number, source: unknown[], json: unknown): Record<string, unknown> {
  return {
    startTime: Date.now(), executionIndex, source, hints: [], executionTime: 1, executionStatus: 'success',
    data: { main: [[{ json, pairedItem: { item: 0 } }]] },
  };
}
