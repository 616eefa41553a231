// A Trigger.dev API at the network boundary, as runtimes.md describes it and as Trigger.dev's own source and a real
// v4.4.3 behave (issue 36), awkward parts (⚠) included: the api-version header changes the status vocabulary; an
// output packet of 128 KiB or more moves to a presigned URL serving superjson `{json, meta?}`
// (application/super+json) or, for a string, the raw text (text/plain); every 404 of a run carries
// `x-should-retry: true`; an idempotency key whose run failed starts a new run; the runs list lags and covers 7 days
// unless told otherwise; durationMs is compute time; waitpoint completion always answers success; 429 has no
// Retry-After; a preview key needs `x-trigger-branch`.
import { createHmac, randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FakeHttpServer, type RecordedRequest } from './fake-http-server.ts';

export const TRIGGER_API_VERSION = '2025-07-16';

export type TriggerStatus =
  | 'PENDING_VERSION' | 'QUEUED' | 'DEQUEUED' | 'EXECUTING' | 'WAITING' | 'COMPLETED' | 'CANCELED' | 'FAILED'
  | 'CRASHED' | 'SYSTEM_FAILURE' | 'DELAYED' | 'EXPIRED' | 'TIMED_OUT';

const TERMINAL: ReadonlySet<TriggerStatus> = new Set(['COMPLETED', 'CANCELED', 'FAILED', 'CRASHED', 'SYSTEM_FAILURE', 'EXPIRED', 'TIMED_OUT']);

/**
 * After these the same idempotency key starts a new run (`isCached: false`), with the same tags; after COMPLETED or
 * CANCELED it stays cached (Trigger.dev's shouldIdempotencyKeyBeCleared; INTERRUPTED is a legacy word).
 */
const KEY_CLEARED: ReadonlySet<string> = new Set(['FAILED', 'CRASHED', 'SYSTEM_FAILURE', 'TIMED_OUT', 'EXPIRED', 'INTERRUPTED']);

/** Output packets of this many bytes or more are offloaded to the object store (OFFLOAD_IO_PACKET_LENGTH_LIMIT). */
export const OFFLOAD_LIMIT = 128 * 1024;

/** What the runs list covers without `filter[createdAt]` (the API's default period). */
const LIST_DEFAULT_PERIOD_MS = 7 * 24 * 60 * 60_000;

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
  /** superjson's `meta` for an offloaded object output (how it revives Dates, Maps, …): the service ignores it. */
  outputMeta?: Record<string, unknown>;
}

export type RunPatch = Partial<Pick<FakeTriggerRun, 'status' | 'output' | 'error' | 'startedAt' | 'finishedAt' | 'durationMs' | 'costInCents' | 'createdAt' | 'outputMeta'>>;

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
  /** Output packets of at least this many bytes are served through outputPresignedUrl (Trigger.dev: 128 KiB). */
  inlineOutputLimit?: number;
  /** A preview environment's key (`tr_preview_…`): requests must name a branch in `x-trigger-branch`. */
  previewBranch?: string;
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
  /** Runs younger than this are not in the runs list yet (ClickHouse replication lag, its overload buffer). */
  listLagMs = 0;
  #lostAnswers: { remaining: number; how: 'reset' | 'bad-gateway' } | null = null;
  readonly #previewBranch: string | null;

  constructor(opts: TriggerDevFakeOptions = {}) {
    super();
    this.#previewBranch = opts.previewBranch ?? null;
    this.secretKey = opts.secretKey ?? `tr_${this.#previewBranch ? 'preview' : 'dev'}_${randomBytes(12).toString('hex')}`;
    this.#inlineLimit = opts.inlineOutputLimit ?? OFFLOAD_LIMIT;
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

  /**
   * The next `times` triggers create their run (and start it) but the answer never reaches the caller: the
   * connection is reset, or a proxy answers 502 — as when a proxy or the network fails after Trigger.dev acted.
   */
  loseTriggerAnswers(times = 1, how: 'reset' | 'bad-gateway' = 'reset'): void {
    this.#lostAnswers = { remaining: times, how };
  }

  /** Network faults, and this fake's own: lost trigger answers, list lag. */
  override clearFaults(): void {
    super.clearFaults();
    this.#lostAnswers = null;
    this.listLagMs = 0;
  }

  /** Runs carrying `tag`, oldest first (a failed key's re-trigger adds a second one). */
  runsTagged(tag: string): FakeTriggerRun[] {
    return [...this.runs.values()].filter((r) => r.tags.includes(tag)).sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime());
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
    // A preview key names its branch environment with the header; without it the key finds no environment.
    if (this.#previewBranch && rec.headers['x-trigger-branch'] !== this.#previewBranch) return this.sendJson(res, 401, { error: 'Invalid or Missing API key' });
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
    // A run that failed (or expired) gives its key up: the same key starts a new run (⚠).
    if (cached && KEY_CLEARED.has(cached.status)) cached.idempotencyKey = undefined;
    else if (cached) return this.#answerTrigger(res, { id: cached.id, isCached: true });
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
    this.#answerTrigger(res, { id: run.id, isCached: false });
  }

  #answerTrigger(res: ServerResponse, body: { id: string; isCached: boolean }): void {
    const lost = this.#lostAnswers;
    if (lost && lost.remaining > 0) {
      lost.remaining -= 1;
      if (lost.how === 'reset') {
        res.socket?.destroy();
        return;
      }
      return this.sendJson(res, 502, { error: 'Bad Gateway' });
    }
    this.sendJson(res, 200, body);
  }

  /**
   * runs.list: newest first; filter[tag] and filter[taskIdentifier] (comma lists); filter[createdAt][from|to]
   * (epoch ms or a date), otherwise the last 7 days only; page[size] up to 100. Runs younger than `listLagMs` are
   * missing: the real list is served from ClickHouse, behind the main database.
   */
  #list(res: ServerResponse, rec: RecordedRequest): void {
    const q = rec.query;
    const tags = q.get('filter[tag]')?.split(',');
    const tasks = q.get('filter[taskIdentifier]')?.split(',');
    const size = Math.min(100, Number(q.get('page[size]') ?? 25) || 25);
    const now = Date.now();
    const from = listDate(q.get('filter[createdAt][from]')) ?? (q.get('filter[createdAt][to]') ? 0 : now - LIST_DEFAULT_PERIOD_MS);
    const to = listDate(q.get('filter[createdAt][to]')) ?? Infinity;
    const data = [...this.runs.values()]
      .filter((r) => r.createdAt.getTime() <= now - this.listLagMs && r.createdAt.getTime() >= from && r.createdAt.getTime() <= to)
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
    // Every 404 of this route says x-should-retry: true, whether the run is late or does not exist (⚠).
    if (!run) return this.sendJson(res, 404, { error: 'Run not found' }, { 'x-should-retry': 'true' });
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
      // Inline, the API answers the plain value (superjson's `json` part, or the string itself).
      if (Buffer.byteLength(outputPacket(run).data) >= this.#inlineLimit) {
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
    // The packet as the worker uploaded it, with the content type it uploaded it with.
    const packet = outputPacket(run);
    res.writeHead(200, { 'content-type': packet.dataType, 'content-length': String(Buffer.byteLength(packet.data)) });
    res.end(packet.data);
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

/**
 * The worker's packet for a return value (stringifyIO): a string as `text/plain`, anything else as superjson —
 * `{"json": …}` plus `meta` when a value needed reviving (Dates, Maps, BigInts …).
 */
function outputPacket(run: FakeTriggerRun): { data: string; dataType: string } {
  if (typeof run.output === 'string') return { data: run.output, dataType: 'text/plain' };
  return { data: JSON.stringify(run.outputMeta ? { json: run.output, meta: run.outputMeta } : { json: run.output }), dataType: 'application/super+json' };
}

function listDate(v: string | null): number | null {
  if (!v) return null;
  const t = /^\d+$/.test(v) ? Number(v) : Date.parse(v);
  return Number.isFinite(t) ? t : null;
}

/**
 * The error an alert carries: Trigger.dev's TaskRunError, tagged by `type` (⚠ — not the retrieve API's
 * `{message, name, stackTrace}`).
 */
export type TriggerAlertError =
  | { type: 'BUILT_IN_ERROR'; name: string; message: string; stackTrace: string }
  | { type: 'CUSTOM_ERROR'; raw: string }
  | { type: 'STRING_ERROR'; raw: string }
  | { type: 'INTERNAL_ERROR'; code: string; message?: string; stackTrace?: string };

export interface TriggerAlertOptions {
  secret: string;
  runId: string;
  taskIdentifier?: string;
  status?: 'FAILED' | 'CRASHED' | 'SYSTEM_FAILURE' | 'TIMED_OUT';
  error?: TriggerAlertError;
  /** Delivery id; deliveries of one alert share it (dedupe key). */
  id?: string;
  /** Legacy channels send the same body without `type`. */
  legacy?: boolean;
}

const BUILT_IN: TriggerAlertError = { type: 'BUILT_IN_ERROR', name: 'Error', message: 'Task failed', stackTrace: 'Error: Task failed\n    at run (src/trigger/my-task.ts:3:11)' };
const ALERT_ENVIRONMENT = { id: 'env_1', type: 'PRODUCTION', slug: 'prod' };
const ALERT_ORGANIZATION = { id: 'org_1', slug: 'acme', name: 'Acme' };
const ALERT_PROJECT = { id: 'proj_1', ref: 'proj_acme', slug: 'acme', name: 'Acme' };

/** A Trigger.dev `alert.run.failed` webhook as sent to the service: raw body plus signature header. */
export function signedFailureAlert(opts: TriggerAlertOptions): { body: string; headers: Record<string, string>; payload: Record<string, unknown> } {
  const now = new Date();
  // Legacy ("v1") alert channels send another shape: no `id`, no `type`, no `object`, the error beside the run.
  const payload: Record<string, unknown> = opts.legacy ? {
    task: { id: opts.taskIdentifier ?? 'my-task', fileName: 'src/trigger/my-task.ts', exportName: 'myTask' },
    run: { id: opts.runId, isTest: false, createdAt: now.toISOString(), idempotencyKey: 'ars_run:1' },
    environment: ALERT_ENVIRONMENT, organization: ALERT_ORGANIZATION, project: ALERT_PROJECT,
    error: opts.error ?? BUILT_IN,
  } : {
    id: opts.id ?? `alert_${randomBytes(8).toString('hex')}`,
    created: now.toISOString(),
    webhookVersion: 'v1',
    type: 'alert.run.failed',
    object: {
      task: { id: opts.taskIdentifier ?? 'my-task', filePath: 'src/trigger/my-task.ts', exportName: 'myTask', version: '20260101.1', sdkVersion: '4.0.0', cliVersion: '4.0.0' },
      run: {
        id: opts.runId, number: 1, status: opts.status ?? 'FAILED', createdAt: now.toISOString(), startedAt: now.toISOString(),
        completedAt: now.toISOString(), isTest: false, tags: [], error: opts.error ?? BUILT_IN,
        isOutOfMemoryError: false, machine: 'small-1x', dashboardUrl: `https://cloud.trigger.dev/runs/${opts.runId}`,
      },
      environment: ALERT_ENVIRONMENT, organization: ALERT_ORGANIZATION, project: ALERT_PROJECT,
    },
  };
  return signed(payload, opts.secret);
}

/**
 * A deployment alert (deliverAlert.server.ts): on a legacy ("v1") channel `{deployment, environment, organization,
 * project, error?, git?}` with no `id`, `type` or `run`; on a v2 channel `{id, type: "alert.deployment.failed" |
 * "alert.deployment.success", object: {deployment, …}}`.
 */
export function signedDeploymentAlert(opts: { secret: string; legacy?: boolean; failed?: boolean }): { body: string; headers: Record<string, string>; payload: Record<string, unknown> } {
  const now = new Date().toISOString();
  const deployment = { id: 'deployment_abc', status: opts.failed ? 'FAILED' : 'DEPLOYED', version: '20260101.1', shortCode: 'abc', ...(opts.failed ? { failedAt: now } : { deployedAt: now }) };
  const error = { name: 'BuildError', message: 'Build failed', stack: 'BuildError: Build failed' };
  const payload: Record<string, unknown> = opts.legacy
    ? { deployment, ...(opts.failed ? { error } : { tasks: [{ id: 'my-task', filePath: 'src/trigger/my-task.ts', exportName: 'myTask', triggerSource: 'STANDARD' }] }), environment: ALERT_ENVIRONMENT, organization: ALERT_ORGANIZATION, project: ALERT_PROJECT }
    : {
      id: `alert_${randomBytes(8).toString('hex')}`, created: now, webhookVersion: 'v1', type: opts.failed ? 'alert.deployment.failed' : 'alert.deployment.success',
      object: { deployment, ...(opts.failed ? { error } : {}), environment: ALERT_ENVIRONMENT, organization: ALERT_ORGANIZATION, project: ALERT_PROJECT },
    };
  return signed(payload, opts.secret);
}

function signed(payload: Record<string, unknown>, secret: string): { body: string; headers: Record<string, string>; payload: Record<string, unknown> } {
  const body = JSON.stringify(payload);
  const signature = createHmac('sha256', secret).update(body).digest('hex');
  return { body, payload, headers: { 'content-type': 'application/json', 'x-trigger-signature-hmacsha256': signature } };
}
