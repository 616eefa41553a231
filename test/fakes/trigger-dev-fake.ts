// A Trigger.dev API at the network boundary, as runtimes.md describes it, awkward parts (⚠) included: the
// api-version header changes the status vocabulary, output above 512 KiB moves to a presigned URL, durationMs is
// compute time, waitpoint completion always answers success, 429 has no Retry-After.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FakeHttpServer, type RecordedRequest } from './fake-http-server.ts';

export const TRIGGER_API_VERSION = '2025-07-16';

export type TriggerStatus =
  | 'PENDING_VERSION' | 'QUEUED' | 'DEQUEUED' | 'EXECUTING' | 'WAITING' | 'COMPLETED' | 'CANCELED' | 'FAILED'
  | 'CRASHED' | 'SYSTEM_FAILURE' | 'DELAYED' | 'EXPIRED' | 'TIMED_OUT';

const TERMINAL: ReadonlySet<TriggerStatus> = new Set(['COMPLETED', 'CANCELED', 'FAILED', 'CRASHED', 'SYSTEM_FAILURE', 'EXPIRED', 'TIMED_OUT']);

/** What a client without the version header sees (Trigger.dev's apiStatusFromRunStatusV1). */
const LEGACY: Partial<Record<TriggerStatus, string>> = { DEQUEUED: 'EXECUTING', WAITING: 'FROZEN' };

export interface TriggerRunError {
  message: string;
  name?: string;
  stackTrace?: string;
}

export interface FakeTriggerRun {
  id: string;
  taskIdentifier: string;
  payload: unknown;
  options: Record<string, unknown>;
  idempotencyKey?: string;
  tags: string[];
  ttl?: string;
  status: TriggerStatus;
  output?: unknown;
  error?: TriggerRunError;
  createdAt: Date;
  startedAt?: Date;
  finishedAt?: Date;
  /** Compute time, deliberately unrelated to finishedAt - startedAt (⚠). */
  durationMs: number;
  costInCents: number;
  events: Array<Record<string, unknown>>;
  /** Retrieves left that answer 404 + x-should-retry (replica lag). */
  lagReadsLeft: number;
}

export type RunPatch = Partial<Pick<FakeTriggerRun, 'status' | 'output' | 'error' | 'startedAt' | 'finishedAt' | 'durationMs' | 'costInCents'>>;

export interface FakeWaitpointToken {
  id: string;
  status: 'WAITING' | 'COMPLETED' | 'TIMED_OUT';
  /** The `data` of the first completion that found the token WAITING. */
  data?: unknown;
  completeCalls: number;
  completedAt?: Date;
  /** `wait.createToken({tags})`: the run tag a task puts on its token (waitpointTag). */
  tags: string[];
}

export interface TriggerDevFakeOptions {
  secretKey?: string;
  /** Output above this many bytes is served through outputPresignedUrl (Trigger.dev: 512 KiB). */
  inlineOutputLimit?: number;
}

export class TriggerDevFake extends FakeHttpServer {
  readonly secretKey: string;
  readonly runs = new Map<string, FakeTriggerRun>();
  readonly tokens = new Map<string, FakeWaitpointToken>();
  readonly #tasks = new Map<string, ((run: FakeTriggerRun) => void) | undefined>();
  readonly #tokenWaiters = new Map<string, Array<(data: unknown) => void>>();
  readonly #inlineLimit: number;
  /**
   * Where outputPresignedUrl points: this fake (which serves it) unless a test sets another origin, to model a
   * runtime that hands back a URL the service must not fetch (a private address, plain http; issue 12).
   */
  presignedOrigin: string | null = null;
  #lagReads = 0;
  #rateLimit: { remaining: number; resetAt: number } | null = null;

  constructor(opts: TriggerDevFakeOptions = {}) {
    super();
    this.secretKey = opts.secretKey ?? `tr_dev_${randomBytes(12).toString('hex')}`;
    this.#inlineLimit = opts.inlineOutputLimit ?? 512 * 1024;
  }

  /** Deploys a task. `onTrigger` runs after a new run is created (not for cached idempotent triggers). */
  registerTask(taskIdentifier: string, onTrigger?: (run: FakeTriggerRun) => void): void {
    this.#tasks.set(taskIdentifier, onTrigger);
  }

  run(runId: string): FakeTriggerRun {
    const run = this.runs.get(runId);
    if (!run) throw new Error(`fake Trigger.dev: no run ${runId}`);
    return run;
  }

  setRun(runId: string, patch: RunPatch): FakeTriggerRun {
    return Object.assign(this.run(runId), patch);
  }

  /** Shorthand: COMPLETED with output, wall clock from startedAt to finishedAt. */
  completeRun(runId: string, output: unknown, startedAt = new Date(Date.now() - 2000), finishedAt = new Date()): FakeTriggerRun {
    return this.setRun(runId, { status: 'COMPLETED', output, startedAt, finishedAt });
  }

  addEvents(runId: string, events: Array<Record<string, unknown>>): void {
    this.run(runId).events.push(...events);
  }

  /** What `wait.createToken()` does inside a task. */
  createWaitpointToken(status: FakeWaitpointToken['status'] = 'WAITING', tags: string[] = []): FakeWaitpointToken {
    const token: FakeWaitpointToken = { id: `waitpoint_${randomBytes(8).toString('hex')}`, status, completeCalls: 0, tags };
    this.tokens.set(token.id, token);
    return token;
  }

  token(id: string): FakeWaitpointToken {
    const token = this.tokens.get(id);
    if (!token) throw new Error(`fake Trigger.dev: no token ${id}`);
    return token;
  }

  /** What `wait.forToken()` does inside a task: resolves with the completion's `data` once the token is completed. */
  waitForToken(id: string): Promise<unknown> {
    const token = this.token(id);
    if (token.status === 'COMPLETED') return Promise.resolve(token.data);
    return new Promise((resolve) => this.#tokenWaiters.set(id, [...(this.#tokenWaiters.get(id) ?? []), resolve]));
  }

  /** Runs triggered from now on answer 404 + `x-should-retry: true` to their first `reads` retrieves. */
  setReplicaLag(reads: number): void {
    this.#lagReads = reads;
  }

  /** The next `times` API requests get 429 problem+json with x-ratelimit-reset = resetAt (epoch ms). */
  rateLimit(times = 1, resetAt = Date.now() + 10_000): void {
    this.#rateLimit = { remaining: times, resetAt };
  }

  /** Trigger requests received, parsed: payload, options (idempotencyKey, ttl, tags) and headers. */
  triggers(): RecordedRequest[] {
    return this.requestsTo(/^\/api\/v1\/tasks\/[^/]+\/trigger$/, 'POST');
  }

  protected override handle(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void {
    const p = rec.path;
    let m: RegExpExecArray | null;
    if ((m = /^\/presigned\/output\/([^/]+)$/.exec(p))) return this.#presigned(res, rec, m[1]!);
    if (rec.headers.authorization !== `Bearer ${this.secretKey}`) return this.sendJson(res, 401, { error: 'Invalid or Missing API key' });
    if (this.#rateLimit && this.#rateLimit.remaining > 0) return this.#tooMany(res);
    const legacy = rec.headers['x-trigger-api-version'] !== TRIGGER_API_VERSION;
    if (req.method === 'POST' && (m = /^\/api\/v1\/tasks\/([^/]+)\/trigger$/.exec(p))) return this.#trigger(res, rec, decodeURIComponent(m[1]!));
    if (req.method === 'GET' && (m = /^\/api\/v3\/runs\/([^/]+)$/.exec(p))) return this.#retrieve(res, m[1]!, legacy);
    if (req.method === 'GET' && p === '/api/v1/runs') return this.#list(res, rec);
    if (req.method === 'POST' && (m = /^\/api\/v2\/runs\/([^/]+)\/cancel$/.exec(p))) return this.#cancel(res, m[1]!);
    if (req.method === 'GET' && (m = /^\/api\/v1\/runs\/([^/]+)\/events$/.exec(p))) {
      const run = this.runs.get(m[1]!);
      return run ? this.sendJson(res, 200, { events: run.events }) : this.sendJson(res, 404, { error: 'Run not found' });
    }
    if (req.method === 'GET' && (m = /^\/api\/v1\/waitpoints\/tokens\/([^/]+)$/.exec(p))) {
      const t = this.tokens.get(m[1]!);
      if (!t) return this.sendJson(res, 404, { error: 'Waitpoint not found' });
      return this.sendJson(res, 200, { id: t.id, url: `${this.url}/api/v1/waitpoints/tokens/${t.id}/callback/x`, status: t.status, completedAt: t.completedAt, tags: t.tags });
    }
    if (req.method === 'POST' && (m = /^\/api\/v1\/waitpoints\/tokens\/([^/]+)\/complete$/.exec(p))) return this.#completeToken(res, rec, m[1]!);
    this.sendJson(res, 404, { error: 'Not found' });
  }

  #trigger(res: ServerResponse, rec: RecordedRequest, taskId: string): void {
    const body = rec.body as { payload?: unknown; options?: Record<string, unknown> } | undefined;
    if (!body || typeof body !== 'object') return this.sendJson(res, 400, { error: 'Invalid request body' });
    if (!this.#tasks.has(taskId)) return this.sendJson(res, 404, { error: 'Task not found' });
    const options = body.options ?? {};
    const key = typeof options.idempotencyKey === 'string' ? options.idempotencyKey : undefined;
    const cached = key ? [...this.runs.values()].find((r) => r.taskIdentifier === taskId && r.idempotencyKey === key) : undefined;
    if (cached) return this.sendJson(res, 200, { id: cached.id, isCached: true });
    const run: FakeTriggerRun = {
      id: `run_${randomBytes(10).toString('hex')}`,
      taskIdentifier: taskId,
      payload: body.payload,
      options,
      idempotencyKey: key,
      tags: Array.isArray(options.tags) ? (options.tags as string[]) : [],
      ttl: typeof options.ttl === 'string' ? options.ttl : undefined,
      status: 'QUEUED',
      createdAt: new Date(),
      durationMs: 0,
      costInCents: 0,
      events: [],
      lagReadsLeft: this.#lagReads,
    };
    this.runs.set(run.id, run);
    this.#tasks.get(taskId)?.(run);
    this.sendJson(res, 200, { id: run.id, isCached: false });
  }

  /** runs.list: newest first; filter[tag] and filter[taskIdentifier] (comma lists); page[size] up to 100. */
  #list(res: ServerResponse, rec: RecordedRequest): void {
    const q = rec.query;
    const tags = q.get('filter[tag]')?.split(',');
    const tasks = q.get('filter[taskIdentifier]')?.split(',');
    const size = Math.min(100, Number(q.get('page[size]') ?? 25) || 25);
    const data = [...this.runs.values()]
      .filter((r) => (!tags || r.tags.some((t) => tags.includes(t))) && (!tasks || tasks.includes(r.taskIdentifier)))
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())
      .slice(0, size)
      .map((r) => ({
        id: r.id, status: r.status, taskIdentifier: r.taskIdentifier, idempotencyKey: r.idempotencyKey, tags: [...r.tags].sort(),
        createdAt: r.createdAt, updatedAt: new Date(), startedAt: r.startedAt, finishedAt: r.finishedAt, isTest: false,
        env: { id: 'env_fake', name: 'prod', user: null }, costInCents: r.costInCents, baseCostInCents: 0, durationMs: r.durationMs,
      }));
    this.sendJson(res, 200, { data, pagination: {} });
  }

  #retrieve(res: ServerResponse, runId: string, legacy: boolean): void {
    const run = this.runs.get(runId);
    if (!run) return this.sendJson(res, 404, { error: 'Run not found' });
    if (run.lagReadsLeft > 0) {
      run.lagReadsLeft -= 1;
      return this.sendJson(res, 404, { error: 'Run not found' }, { 'x-should-retry': 'true' });
    }
    const status = legacy ? (LEGACY[run.status] ?? run.status) : run.status;
    const body: Record<string, unknown> = {
      id: run.id, taskIdentifier: run.taskIdentifier, status, idempotencyKey: run.idempotencyKey, ttl: run.ttl,
      tags: [...run.tags].sort(), createdAt: run.createdAt, updatedAt: new Date(), startedAt: run.startedAt,
      finishedAt: run.finishedAt, durationMs: run.durationMs, costInCents: run.costInCents, baseCostInCents: 0,
      attemptCount: run.startedAt ? 1 : 0, isTest: false, depth: 0, payload: run.payload,
      // isCompleted leaves out EXPIRED and TIMED_OUT, as the real one does (⚠).
      isCompleted: ['COMPLETED', 'CANCELED', 'FAILED', 'CRASHED', 'SYSTEM_FAILURE'].includes(run.status),
      error: run.error, relatedRuns: {}, attempts: [],
    };
    if (run.status === 'COMPLETED' && run.output !== undefined) {
      if (Buffer.byteLength(JSON.stringify(run.output)) > this.#inlineLimit) {
        body.outputPresignedUrl = `${this.presignedOrigin ?? this.url}/presigned/output/${run.id}?X-Amz-Signature=${randomBytes(8).toString('hex')}`;
      } else body.output = run.output;
    }
    this.sendJson(res, 200, body);
  }

  #presigned(res: ServerResponse, rec: RecordedRequest, runId: string): void {
    // An object store refuses a presigned request that also carries an Authorization header.
    if (rec.headers.authorization) return this.sendJson(res, 400, { error: 'InvalidArgument: only one auth mechanism allowed' });
    const run = this.runs.get(runId);
    if (!run || !rec.query.get('X-Amz-Signature')) return this.sendJson(res, 403, { error: 'AccessDenied' });
    this.sendJson(res, 200, run.output);
  }

  #cancel(res: ServerResponse, runId: string): void {
    const run = this.runs.get(runId);
    if (!run) return this.sendJson(res, 404, { error: 'Run not found' });
    if (!TERMINAL.has(run.status)) Object.assign(run, { status: 'CANCELED', finishedAt: new Date() });
    this.sendJson(res, 200, { id: run.id });
  }

  #completeToken(res: ServerResponse, rec: RecordedRequest, id: string): void {
    const token = this.tokens.get(id);
    if (!token) return this.sendJson(res, 404, { error: 'Waitpoint not found' });
    token.completeCalls += 1;
    if (token.status === 'WAITING') {
      token.status = 'COMPLETED';
      token.data = (rec.body as { data?: unknown } | undefined)?.data;
      token.completedAt = new Date();
      for (const resolve of this.#tokenWaiters.get(id) ?? []) resolve(token.data);
      this.#tokenWaiters.delete(id);
    }
    this.sendJson(res, 200, { success: true }); // even when it was already completed or timed out (⚠)
  }

  #tooMany(res: ServerResponse): void {
    const limit = this.#rateLimit!;
    limit.remaining -= 1;
    const seconds = Math.max(0, Math.ceil((limit.resetAt - Date.now()) / 1000));
    this.sendJson(res, 429, {
      title: 'Rate Limit Exceeded', status: 429, type: 'https://trigger.dev/docs/limits#rate-limits',
      detail: `Rate limit exceeded 0/1500 requests remaining. Retry in ${seconds} seconds.`,
      reset: limit.resetAt, limit: 1500, remaining: 0,
    }, {
      'content-type': 'application/problem+json',
      'x-ratelimit-limit': '1500', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(limit.resetAt),
    });
  }
}

export interface TriggerAlertOptions {
  secret: string;
  runId: string;
  taskIdentifier?: string;
  status?: 'FAILED' | 'CRASHED' | 'SYSTEM_FAILURE' | 'TIMED_OUT';
  error?: TriggerRunError;
  /** Delivery id; deliveries of one alert share it (dedupe key). */
  id?: string;
  /** Legacy channels send the same body without `type`. */
  legacy?: boolean;
}

/** A Trigger.dev `alert.run.failed` webhook as sent to the service: raw body plus signature header. */
export function signedFailureAlert(opts: TriggerAlertOptions): { body: string; headers: Record<string, string>; payload: Record<string, unknown> } {
  const now = new Date();
  // Legacy ("v1") alert channels send another shape: no `id`, no `type`, no `object`, the error beside the run.
  const payload: Record<string, unknown> = opts.legacy ? {
    task: { id: opts.taskIdentifier ?? 'my-task', fileName: 'src/trigger/my-task.ts', exportName: 'myTask' },
    run: { id: opts.runId, isTest: false, createdAt: now.toISOString(), idempotencyKey: 'ars_run:1' },
    environment: { id: 'env_1', type: 'PRODUCTION', slug: 'prod' },
    organization: { id: 'org_1', slug: 'acme', name: 'Acme' },
    project: { id: 'proj_1', ref: 'proj_acme', slug: 'acme', name: 'Acme' },
    error: { type: 'BUILT_IN_ERROR', ...(opts.error ?? { message: 'Task failed', name: 'Error' }), stackTrace: 'Error: Task failed' },
  } : {
    id: opts.id ?? `alert_${randomBytes(8).toString('hex')}`,
    created: now.toISOString(),
    webhookVersion: 'v1',
    type: 'alert.run.failed',
    object: {
      task: { id: opts.taskIdentifier ?? 'my-task', filePath: 'src/trigger/my-task.ts', exportName: 'myTask', version: '20260101.1', sdkVersion: '4.0.0', cliVersion: '4.0.0' },
      run: {
        id: opts.runId, number: 1, status: opts.status ?? 'FAILED', createdAt: now.toISOString(), startedAt: now.toISOString(),
        completedAt: now.toISOString(), isTest: false, tags: [], error: opts.error ?? { message: 'Task failed', name: 'Error', stackTrace: 'Error: Task failed' },
        isOutOfMemoryError: false, machine: 'small-1x', dashboardUrl: `https://cloud.trigger.dev/runs/${opts.runId}`,
      },
      environment: { id: 'env_1', type: 'PRODUCTION', slug: 'prod' },
      organization: { id: 'org_1', slug: 'acme', name: 'Acme' },
      project: { id: 'proj_1', ref: 'proj_acme', slug: 'acme', name: 'Acme' },
    },
  };
  const body = JSON.stringify(payload);
  const signature = createHmac('sha256', opts.secret).update(body).digest('hex');
  return { body, payload, headers: { 'content-type': 'application/json', 'x-trigger-signature-hmacsha256': signature } };
}
