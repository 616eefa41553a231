// The task runtime: Trigger.dev v3/v4 through its HTTP API (runtimes.md "Trigger.dev"). Results are polled, so
// nothing here holds a call open; every call has the short API timeouts of RuntimeHttp.
import type {
  FoundRun, InvokeArgs, Invoked, MappedStatus, Outcome, RemoteStatus, RunMarker, RuntimeAdapter, RuntimeConnection,
  RuntimeLogEntry, StreamStart, WaitpointState,
} from './runtime-adapter.ts';
import { wirePayload } from './runtime-adapter.ts';
import { fail, joinUrl, RuntimeHttp, unbuildableUrl, type ApiResponse } from './http.ts';
import type { RuntimeCallName } from './runtime-calls.ts';
import type { OutboundClient } from '../lib/safe-http.ts';
import { fetchPresignedOutput } from './presigned-output.ts';
import { runtimeDate } from '../lib/timestamps.ts';
import { RUN_TAG_PREFIX, failureFor, runKey, runTag, taskOutput, toLogEntry, triggerErrorText } from './trigger-dev-mapping.ts';

/** Without it Trigger.dev answers the legacy status vocabulary, with no WAITING or DEQUEUED (⚠ runtimes.md). */
export const TRIGGER_API_VERSION = '2025-07-16';

/** Spec part 3 rule 5: a run that never leaves Trigger.dev's queue expires there instead of running late. */
const RUN_TTL = '10m';

/**
 * Decided from `status` alone (⚠ `isCompleted` leaves out EXPIRED and TIMED_OUT). WAITING is `running`: the
 * service's `waiting` comes only from the task's callback. Legacy words are mapped too, in case a proxy strips
 * the version header.
 */
const STATUS: Record<string, MappedStatus> = {
  PENDING_VERSION: 'queued', QUEUED: 'queued', DELAYED: 'queued', WAITING_FOR_DEPLOY: 'queued',
  DEQUEUED: 'running', EXECUTING: 'running', WAITING: 'running', REATTEMPTING: 'running', FROZEN: 'running',
  COMPLETED: 'completed',
  CANCELED: 'cancelled',
  FAILED: 'failed', CRASHED: 'failed', SYSTEM_FAILURE: 'failed', EXPIRED: 'failed', TIMED_OUT: 'failed', INTERRUPTED: 'failed',
};

const TERMINAL_WORDS: ReadonlySet<string> = new Set(Object.entries(STATUS).filter(([, m]) => m === 'completed' || m === 'failed' || m === 'cancelled').map(([w]) => w));

/** The runs list is asked for runs created from this long before the run's creation here (clock skew). */
const LIST_CLOCK_SKEW_MS = 60_000;

/** Reasons for terminal failures that Trigger.dev reports without an error object. */
const STATUS_REASON: Record<string, string> = {
  EXPIRED: 'Run expired in the task runtime\'s queue before it started',
  TIMED_OUT: 'Run exceeded its maximum duration in the task runtime',
  CRASHED: 'Run crashed in the task runtime',
  SYSTEM_FAILURE: 'Task runtime system failure',
};

interface TriggerRun {
  id?: string;
  taskIdentifier?: string;
  status?: string;
  output?: unknown;
  outputPresignedUrl?: string;
  error?: unknown;
  startedAt?: string;
  finishedAt?: string;
}

/**
 * How long a trigger is repeated with its idempotency key when its answer was lost, or waited for when Trigger.dev
 * rate-limited it (issue 36 item 2). The caller of /trigger is waiting, so this is short; beyond it a lost answer is
 * left to recovery, a 429 fails the run (nothing was created).
 */
export const TRIGGER_ANSWER_WINDOW_MS = 20_000;
/** Pauses before the 2nd, 3rd, … attempt of a trigger whose answer was lost. */
const TRIGGER_RETRY_DELAYS_MS = [500, 1_500, 4_000, 8_000];

export interface TriggerDevAdapterOptions {
  http?: RuntimeHttp;
  /** TRIGGER_ANSWER_WINDOW_MS unless a test shortens it. */
  answerWindowMs?: number;
  /**
   * The SSRF-guarded client (ctx.outbound, handed in by the runtime registry) that fetches presigned output URLs.
   * Without one, such output is refused, never fetched unguarded.
   */
  outbound?: OutboundClient;
}

export class TriggerDevAdapter implements RuntimeAdapter {
  readonly kind = 'task' as const;
  readonly supportsSyncInvoke = false;
  readonly supportsWaitpoints = true;
  readonly #http: RuntimeHttp;
  readonly #outbound: OutboundClient | null;
  readonly #answerWindowMs: number;

  constructor(opts: TriggerDevAdapterOptions = {}) {
    this.#http = opts.http ?? new RuntimeHttp();
    this.#outbound = opts.outbound ?? null;
    this.#answerWindowMs = opts.answerWindowMs ?? TRIGGER_ANSWER_WINDOW_MS;
  }

  /**
   * Issue 36 item 2. A trigger whose answer was lost after it was sent (a reset, a timeout, a proxy's 5xx) may have
   * created the run: it is repeated with the same idempotency key within TRIGGER_ANSWER_WINDOW_MS — Trigger.dev
   * answers `{id, isCached: true}` while that run lives, or creates it now if it never arrived. Past the window the
   * failure says `maybeStarted` (start-run.ts leaves the run to recovery). A 429 created nothing: it is waited for
   * when its `x-ratelimit-reset` falls inside the window, otherwise it fails the run with that reason. A connection
   * that was never made created nothing either and fails at once.
   */
  async invoke(args: InvokeArgs): Promise<Outcome<Invoked>> {
    const key = runKey(args.payload);
    const body = {
      payload: wirePayload(args.payload),
      // The run's deployment-unique key as idempotency key (a trigger whose answer was lost is repeated safely)
      // and as a tag (a run whose bookkeeping was lost can be found: findRun).
      options: { idempotencyKey: key, tags: [runTag(key)], ttl: RUN_TTL },
    };
    const deadline = Date.now() + this.#answerWindowMs;
    let mayHaveActed = false;
    for (let attempt = 0; ; attempt++) {
      const res = await this.#api(args.runtime, 'POST', ['api', 'v1', 'tasks', args.target, 'trigger'], 'Trigger.dev trigger', body);
      if (res.ok) {
        const id = (res.value.json as { id?: unknown } | undefined)?.id;
        if (typeof id !== 'string' || id === '') return fail('bad_response', 'Trigger.dev trigger: answer has no run id');
        return { ok: true, value: { externalRunId: id } };
      }
      const f = res.failure;
      const rateLimited = f.httpStatus === 429;
      mayHaveActed ||= f.retryable === true && !f.notSent && !rateLimited;
      let pause: number | null = null;
      if (rateLimited) pause = f.retryAt ? Math.max(0, f.retryAt.getTime() - Date.now()) : null;
      else if (mayHaveActed && f.retryable) pause = TRIGGER_RETRY_DELAYS_MS[Math.min(attempt, TRIGGER_RETRY_DELAYS_MS.length - 1)]!;
      if (pause === null || Date.now() + pause > deadline) {
        if (mayHaveActed) {
          return { ok: false, failure: { ...f, maybeStarted: true, message: `${f.message}; Trigger.dev may have started the run (repeated with its idempotency key for ${Math.round(this.#answerWindowMs / 1000)} s)` } };
        }
        if (rateLimited && f.retryAt) f.message = `${f.message} until ${f.retryAt.toISOString()}`;
        return res;
      }
      await new Promise((resolve) => setTimeout(resolve, pause));
    }
  }

  async invokeStream(_args: InvokeArgs): Promise<Outcome<StreamStart>> {
    return fail('not_supported', 'Trigger.dev tasks cannot stream a file answer');
  }

  /**
   * A 404 is reported as `notFound` (issue 36 item 3): Trigger.dev puts `x-should-retry: true` on every 404 of this
   * route, so that header says nothing about replica lag; the caller knows whether the run was triggered a moment
   * ago (poll-run.ts).
   */
  async fetchStatus(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<RemoteStatus>> {
    const res = await this.#api(runtime, 'GET', ['api', 'v3', 'runs', externalRunId], 'Trigger.dev retrieve run');
    if (!res.ok) {
      if (res.failure.httpStatus !== 404) return res;
      return { ok: false, failure: { kind: 'rejected', httpStatus: 404, notFound: true, retryable: false, message: 'Trigger.dev retrieve run: the runtime has no such run (HTTP 404)' } };
    }
    const run = res.value.json as TriggerRun;
    const word = typeof run.status === 'string' ? run.status : '';
    let status: MappedStatus | 'unknown' = STATUS[word] ?? 'unknown';
    const startedAt = runtimeDate(run.startedAt);
    const finishedAt = runtimeDate(run.finishedAt);
    let output: unknown = null;
    let error: string | null = null;
    if (status === 'completed') {
      const fetched = await this.#output(run);
      if (!fetched.ok) return fetched;
      // An output the guard refused is never fetched: the run fails with the reason instead (issue 12).
      if ('refused' in fetched.value) {
        status = 'failed';
        error = fetched.value.refused;
      } else output = taskOutput(fetched.value.output);
    }
    if (status === 'failed' && error === null) {
      error = triggerErrorText(run.error) ?? STATUS_REASON[word] ?? `Run ended with status ${word}`;
    }
    const task = run.taskIdentifier;
    return {
      ok: true,
      value: {
        status,
        output,
        error,
        startedAt,
        finishedAt,
        // Wall clock; Trigger.dev's durationMs is compute time only (⚠ runtimes.md).
        durationMs: startedAt && finishedAt ? finishedAt.getTime() - startedAt.getTime() : null,
        runtimeStatus: word,
        owner: typeof task === 'string' && task !== '' ? { taskIdentifier: task } : null,
      },
    };
  }

  /** Answers 200 for finished runs too, so cancelling is idempotent. */
  async cancel(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<void>> {
    const res = await this.#api(runtime, 'POST', ['api', 'v2', 'runs', externalRunId, 'cancel'], 'Trigger.dev cancel');
    return res.ok ? { ok: true, value: undefined } : res;
  }

  /**
   * The run this deployment triggered for `marker`, found by its tag among the task's runs (one list call, made
   * only for a run whose trigger answer was lost). Listing starts nothing, unlike repeating the trigger with its
   * idempotency key, which would start a run whose trigger never arrived, late (decisions.md). Issue 36 item 4: the
   * list covers the last 7 days unless told otherwise, so it is given the run's creation window (from a minute
   * before its creation here: clocks differ). Two runs may carry the tag — after a failed run, the same key starts
   * a new one (item 5) — so a live one is preferred, then the newest.
   */
  async findRun(runtime: RuntimeConnection, target: string, marker: RunMarker): Promise<Outcome<FoundRun | null>> {
    const tag = runTag(runKey(marker));
    const query = {
      'filter[tag]': tag, 'filter[taskIdentifier]': target, 'page[size]': '10',
      'filter[createdAt][from]': String(marker.createdAt.getTime() - LIST_CLOCK_SKEW_MS),
    };
    const res = await this.#api(runtime, 'GET', ['api', 'v1', 'runs'], 'Trigger.dev list runs', undefined, query);
    if (!res.ok) return res;
    const data = (res.value.json as { data?: unknown }).data;
    if (!Array.isArray(data)) return fail('bad_response', 'Trigger.dev list runs: answer has no data list');
    const hits = (data as Array<{ id?: unknown; tags?: unknown; taskIdentifier?: unknown; status?: unknown; createdAt?: unknown }>).filter(
      (r) => typeof r.id === 'string' && r.id !== '' && Array.isArray(r.tags) && r.tags.includes(tag) && r.taskIdentifier === target,
    );
    const created = (r: { createdAt?: unknown }): number => runtimeDate(r.createdAt)?.getTime() ?? 0;
    const live = (r: { status?: unknown }): boolean => typeof r.status === 'string' && !TERMINAL_WORDS.has(r.status);
    const hit = hits.sort((a, b) => Number(live(b)) - Number(live(a)) || created(b) - created(a))[0];
    if (!hit) return { ok: true, value: null };
    const externalRunId = hit.id as string;
    const status = await this.fetchStatus(runtime, externalRunId);
    return status.ok ? { ok: true, value: { externalRunId, remote: status.value } } : status;
  }

  async inspectWaitpoint(runtime: RuntimeConnection, tokenId: string): Promise<Outcome<WaitpointState>> {
    const res = await this.#api(runtime, 'GET', ['api', 'v1', 'waitpoints', 'tokens', tokenId], 'Trigger.dev waitpoint');
    if (!res.ok) return res;
    const { status: word, tags } = res.value.json as { status?: unknown; tags?: unknown };
    const status = word === 'WAITING' || word === 'COMPLETED' || word === 'TIMED_OUT' ? word : 'UNKNOWN';
    // Only our own tags say which run a token is for; a task tags its token with `waitpointTag` (the SDK does).
    const runTags = Array.isArray(tags) ? tags.filter((t): t is string => typeof t === 'string' && t.startsWith(RUN_TAG_PREFIX)) : [];
    return { ok: true, value: runTags.length > 0 ? { status, resumes: { runTags } } : { status } };
  }

  /** Trigger.dev answers success even for a finished token (⚠): callers inspect first. The key is `data` (⚠). */
  async completeWaitpoint(runtime: RuntimeConnection, tokenId: string, payload: unknown): Promise<Outcome<void>> {
    const res = await this.#api(runtime, 'POST', ['api', 'v1', 'waitpoints', 'tokens', tokenId, 'complete'],
      'Trigger.dev complete waitpoint', { data: payload ?? null });
    return res.ok ? { ok: true, value: undefined } : res;
  }

  async fetchLogs(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<RuntimeLogEntry[]>> {
    const res = await this.#api(runtime, 'GET', ['api', 'v1', 'runs', externalRunId, 'events'], 'Trigger.dev run events');
    if (!res.ok) return res;
    const events = (res.value.json as { events?: unknown }).events;
    if (!Array.isArray(events)) return fail('bad_response', 'Trigger.dev run events: answer has no events list');
    return { ok: true, value: events.map(toLogEntry) };
  }

  /**
   * An output packet of 128 KiB or more comes as a presigned object-store URL (⚠), fetched through the guarded
   * client only and decoded by its content type (presigned-output.ts); smaller ones come inline, already the plain
   * value.
   */
  #output(run: TriggerRun): ReturnType<typeof fetchPresignedOutput> {
    if (run.output !== undefined || typeof run.outputPresignedUrl !== 'string') return Promise.resolve({ ok: true, value: { output: run.output ?? null } });
    return fetchPresignedOutput(this.#http, this.#outbound, run.outputPresignedUrl);
  }

  /** One authenticated API call; any non-2xx or non-JSON answer becomes a failure. */
  async #api(
    runtime: RuntimeConnection, method: 'GET' | 'POST', segments: string[], what: RuntimeCallName, json?: unknown, query?: Record<string, string>,
  ): Promise<Outcome<ApiResponse>> {
    if (!runtime.apiKey) return fail('rejected', `${what}: the runtime has no secret key`);
    const url = joinUrl(runtime.baseUrl, ...segments);
    if (!url) return fail('rejected', unbuildableUrl(what));
    for (const [k, v] of Object.entries(query ?? {})) url.searchParams.set(k, v);
    const headers = { authorization: `Bearer ${runtime.apiKey}`, 'x-trigger-api-version': TRIGGER_API_VERSION };
    const res = await this.#http.call({ method, url, headers, json, what });
    if (!res.ok) return res;
    if (res.value.status < 200 || res.value.status >= 300) return failureFor(res.value, what, runtime.apiKey);
    if (!res.value.isJson || typeof res.value.json !== 'object' || res.value.json === null) {
      return fail('bad_response', `${what}: answer is not a JSON object`);
    }
    return res;
  }
}
