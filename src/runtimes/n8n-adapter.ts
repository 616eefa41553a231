// The workflow runtime: n8n, triggered through a Webhook node that holds the request until its Respond node
// runs (runtimes.md "n8n"). The API key is only ever sent to the executions API, never to a webhook: webhook
// request headers become workflow data that any node can read.
import type {
  FoundRun, InvokeArgs, Invoked, Outcome, RunMarker, RemoteStatus, RuntimeAdapter, RuntimeConnection, RuntimeFailure, RuntimeLogEntry,
  StreamStart, WaitpointState, WorkflowAnswer,
} from './runtime-adapter.ts';
import { startClientSpan } from '../tracing/spans.ts';
import { wirePayload } from './runtime-adapter.ts';
import { openStream } from './upstream-stream.ts';
import { fail, headerRecord, joinUrl, RuntimeHttp, runtimeMessage, transportFailure, unbuildableUrl, type ApiResponse } from './http.ts';
import { cursorOf, EXECUTION_PAGES, EXECUTIONS_PAGE, matchExecution, workflowsForPath, type ExecutionPage, type WebhookWorkflow, type WorkflowPage } from './n8n-lookup.ts';
import type { RuntimeCallName } from './runtime-calls.ts';
import { ABORTED_MESSAGE, startHeldCall, type HeldAnswer } from './held-call.ts';
import {
  answerFromHeld, EXECUTION_ID_HEADER, executionIdFromResumeUrl, logsFromExecution, ownerOf, statusFromExecution,
  type Execution,
} from './n8n-mapping.ts';

export interface N8nAdapterOptions {
  http?: RuntimeHttp;
  /** How long invoke waits for an early refusal (default REFUSAL_GRACE_MS). */
  refusalGraceMs?: number;
  /** Largest held-call answer kept in memory (spec 8.4: no hard cap on output JSON; this is the safety net). */
  maxAnswerBytes?: number;
}

/**
 * n8n answers a webhook path no active workflow listens on at once, with 404 "… is not registered", after it has
 * accepted the request. Waiting this long for such an answer reports a misconfigured path as a refusal (the run
 * fails to start: /trigger answers 500) instead of a start followed by a failed run. Longer workflows are not
 * delayed more. A wait on the network, so in real time: the context's clock, which tests hold still, would never
 * end it (decisions.md "One way per job").
 */
const REFUSAL_GRACE_MS = 250;

export class N8nAdapter implements RuntimeAdapter {
  readonly kind = 'workflow' as const;
  readonly supportsSyncInvoke = true;
  readonly supportsWaitpoints = true;
  readonly #http: RuntimeHttp;
  readonly #maxAnswerBytes: number;
  readonly #refusalGraceMs: number;

  constructor(opts: N8nAdapterOptions = {}) {
    this.#http = opts.http ?? new RuntimeHttp();
    this.#refusalGraceMs = opts.refusalGraceMs ?? REFUSAL_GRACE_MS;
    this.#maxAnswerBytes = opts.maxAnswerBytes ?? this.#http.maxJsonBytes;
  }

  async invoke(args: InvokeArgs): Promise<Outcome<Invoked>> {
    const url = webhookUrl(args.runtime, args.target);
    if (!url) return fail('rejected', 'n8n webhook: invalid base URL or webhook path');
    // The span lasts as long as the call is held: until n8n answers (the workflow's Respond node, or its end).
    const span = startClientSpan('n8n webhook', { 'ars.runtime.kind': 'workflow', 'ars.runtime.operation': 'invoke' });
    const call = startHeldCall(this.#http, {
      url,
      headers: { ...span.headers, 'content-type': 'application/json', accept: 'application/json' },
      body: Buffer.from(JSON.stringify(wirePayload(args.payload))),
      signal: args.signal,
      maxBytes: this.#maxAnswerBytes,
      what: 'n8n webhook',
    });
    void call.answer.then((o) => span.end(o.ok ? { status: o.value.status } : { error: o.failure.kind }));
    const accepted = await call.accepted;
    if (!accepted.ok) return accepted;
    const answer = call.answer.then((o) => toWorkflowAnswer(o, call.abortedByCaller()));
    const early = await Promise.race([answer, delay(this.#refusalGraceMs)]);
    if (early && early.httpStatus === 404 && /not registered/i.test(early.error ?? '')) return fail('rejected', `n8n webhook: ${early.error}`);
    return { ok: true, value: { externalRunId: null, answer } };
  }

  async invokeStream(args: InvokeArgs): Promise<Outcome<StreamStart>> {
    const url = webhookUrl(args.runtime, args.target);
    if (!url) return fail('rejected', 'n8n webhook: invalid base URL or webhook path');
    if (args.signal?.aborted) return fail('timeout', `n8n webhook: ${ABORTED_MESSAGE}`);
    // The caller's signal bounds only the wait for the answer to begin; once bytes flow, aborting it must not
    // cut the download (spec 4.3: the window bounds the start of streaming). So it is relayed, then detached.
    const relay = new AbortController();
    const onAbort = (): void => relay.abort();
    args.signal?.addEventListener('abort', onAbort, { once: true });
    const { heldCallMaxMs, streamIdleMs } = this.#http.timeouts;
    // Until the answer begins (the stream's bytes are the download's, measured by the request's own span).
    const span = startClientSpan('n8n webhook', { 'ars.runtime.kind': 'workflow', 'ars.runtime.operation': 'invoke_stream' });
    try {
      // undici's dispatch, not request: the bytes go straight from the parser to the caller (upstream-stream.ts).
      const res = await openStream(this.#http.dispatcher, {
        url,
        method: 'POST',
        headers: { ...span.headers, 'content-type': 'application/json' },
        body: JSON.stringify(wirePayload(args.payload)),
        signal: relay.signal,
        headersTimeout: heldCallMaxMs,
        bodyTimeout: streamIdleMs,
      });
      span.end({ status: res.status });
      const headers = headerRecord(res.headers);
      const type = headers['content-type'] ?? '';
      // Only an announced empty body can be judged here; a chunked empty body is seen by the route as 0 bytes.
      const isJson = /[/+]json\b/i.test(type) || headers['content-length'] === '0';
      return {
        ok: true,
        value: {
          status: res.status,
          headers,
          body: res.body,
          isJson,
          externalRunId: headers[EXECUTION_ID_HEADER] || null,
        },
      };
    } catch (err) {
      span.end({ error: relay.signal.aborted ? 'timeout' : 'unreachable' });
      if (relay.signal.aborted) return fail('timeout', `n8n webhook: ${ABORTED_MESSAGE}`);
      return { ok: false, failure: transportFailure(err, 'n8n webhook') };
    } finally {
      args.signal?.removeEventListener('abort', onAbort);
    }
  }

  async fetchStatus(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<RemoteStatus>> {
    const ex = await this.#getExecution(runtime, externalRunId);
    return ex.ok ? { ok: true, value: statusFromExecution(ex.value) } : ex;
  }

  /**
   * The execution that received this run's payload: the workflows listening on the agent's path, then their
   * executions (newest first, with data) until one matches or they are older than the run. null: n8n has no
   * execution of this run (the call never reached it).
   */
  async findRun(runtime: RuntimeConnection, target: string, marker: RunMarker): Promise<Outcome<FoundRun | null>> {
    const workflows: WebhookWorkflow[] = [];
    for (let cursor: string | null = null, pages = 0; pages < 10; pages++) {
      const page = await this.#apiGet<WorkflowPage>(runtime, ['workflows'], { limit: '100', ...(cursor ? { cursor } : {}) });
      if (!page.ok) return page;
      workflows.push(...workflowsForPath(page.value, target));
      if (!(cursor = cursorOf(page.value))) break;
    }
    // Running executions first (few, and what a cancel looks for), then the rest: the plain list leaves them out.
    const lists = workflows.flatMap((wf) => [{ ...wf, status: 'running' }, { ...wf, status: null }]);
    for (const wf of lists) {
      for (let cursor: string | null = null, pages = 0; pages < EXECUTION_PAGES; pages++) {
        const query: Record<string, string> = { workflowId: wf.workflowId, includeData: 'true', limit: String(EXECUTIONS_PAGE) };
        if (wf.status) query.status = wf.status;
        if (cursor) query.cursor = cursor;
        const page = await this.#apiGet<ExecutionPage>(runtime, ['executions'], query);
        if (!page.ok) return page;
        const match = matchExecution(page.value, wf.webhookNode, marker);
        if (match.kind === 'found') {
          const id = match.execution.id;
          if (id === undefined || id === null || String(id) === '') return fail('bad_response', 'n8n executions API: a listed execution has no id');
          return { ok: true, value: { externalRunId: String(id), remote: statusFromExecution(match.execution) } };
        }
        if (match.kind === 'older_than_run' || !(cursor = cursorOf(page.value))) break;
      }
    }
    return { ok: true, value: null };
  }

  async fetchLogs(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<RuntimeLogEntry[]>> {
    const ex = await this.#getExecution(runtime, externalRunId);
    return ex.ok ? { ok: true, value: logsFromExecution(ex.value) } : ex;
  }

  /**
   * Stops the execution. Idempotent like Trigger.dev's cancel: 409 (already stopped) counts as done. n8n before
   * early 2026 (e.g. 2.8.4) has no stop endpoint and answers 404: reported as not_supported, so the caller falls
   * back to aborting the held call and failing the run on its side.
   */
  async cancel(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<void>> {
    if (!runtime.apiKey) return fail('not_supported', 'n8n stop: the runtime has no API key');
    const url = joinUrl(runtime.baseUrl, 'api', 'v1', 'executions', externalRunId, 'stop');
    if (!url) return fail('rejected', unbuildableUrl('n8n stop'));
    const res = await this.#http.call({ method: 'POST', url, headers: apiHeaders(runtime.apiKey), what: 'n8n stop' });
    if (!res.ok) return res;
    const { status } = res.value;
    if ((status >= 200 && status < 300) || status === 409) return { ok: true, value: undefined };
    if (status === 404) return { ok: false, failure: { kind: 'not_supported', message: 'n8n stop: endpoint or execution not found (n8n before 2026 has no stop endpoint)', httpStatus: 404 } };
    return apiFailure(res.value, 'n8n stop');
  }

  /** tokenId is the resume URL. WAITING only when the executions API confirms it; otherwise UNKNOWN. */
  async inspectWaitpoint(runtime: RuntimeConnection, tokenId: string): Promise<Outcome<WaitpointState>> {
    const url = resumeUrlOnRuntime(runtime, tokenId);
    if (!url) return fail('rejected', 'n8n waitpoint: resume URL is not on the runtime\'s origin');
    const executionId = executionIdFromResumeUrl(url);
    if (!executionId) return { ok: true, value: { status: 'UNKNOWN' } };
    if (!runtime.apiKey) return { ok: true, value: { status: 'UNKNOWN', resumes: { externalRunId: executionId } } };
    const ex = await this.#getExecution(runtime, executionId);
    if (!ex.ok) return ex.failure.httpStatus === 404 ? { ok: true, value: { status: 'UNKNOWN', resumes: { externalRunId: executionId } } } : ex;
    const resumes = { externalRunId: executionId, owner: ownerOf(ex.value) };
    const word = ex.value.status;
    if (word === 'waiting') return { ok: true, value: { status: 'WAITING', resumes } };
    // Running again or finished: the wait is over either way.
    if (word && ['running', 'success', 'error', 'crashed', 'canceled'].includes(word)) return { ok: true, value: { status: 'COMPLETED', resumes } };
    return { ok: true, value: { status: 'UNKNOWN', resumes } };
  }

  /** POSTs the payload to the resume URL, and only to the runtime's own origin (the URL came from a callback). */
  async completeWaitpoint(runtime: RuntimeConnection, tokenId: string, payload: unknown): Promise<Outcome<void>> {
    const url = resumeUrlOnRuntime(runtime, tokenId);
    if (!url) return fail('rejected', 'n8n waitpoint: resume URL is not on the runtime\'s origin');
    const res = await this.#http.call({ method: 'POST', url, json: payload ?? {}, what: 'n8n resume' });
    if (!res.ok) return res;
    if (res.value.status >= 200 && res.value.status < 300) return { ok: true, value: undefined };
    return apiFailure(res.value, 'n8n resume');
  }

  #getExecution(runtime: RuntimeConnection, id: string): Promise<Outcome<Execution>> {
    return this.#apiGet<Execution>(runtime, ['executions', id], { includeData: 'true' });
  }

  /** One GET on n8n's public API (`/api/v1/…`), whose answer must be a JSON object. */
  async #apiGet<T>(runtime: RuntimeConnection, segments: string[], query: Record<string, string>): Promise<Outcome<T>> {
    const what: RuntimeCallName = segments[0] === 'workflows' ? 'n8n workflows API' : 'n8n executions API';
    if (!runtime.apiKey) return fail('not_supported', `${what}: the runtime has no API key`);
    const url = joinUrl(runtime.baseUrl, 'api', 'v1', ...segments);
    if (!url) return fail('rejected', unbuildableUrl(what));
    for (const [k, v] of Object.entries(query)) url.searchParams.set(k, v);
    const res = await this.#http.call({ method: 'GET', url, headers: apiHeaders(runtime.apiKey), what });
    if (!res.ok) return res;
    if (res.value.status !== 200) return apiFailure(res.value, what);
    if (!res.value.isJson || typeof res.value.json !== 'object' || res.value.json === null) {
      return fail('bad_response', `${what}: answer is not a JSON object`);
    }
    return { ok: true, value: res.value.json as T };
  }
}

function apiHeaders(apiKey: string): Record<string, string> {
  return { 'x-n8n-api-key': apiKey };
}

function apiFailure(res: ApiResponse, what: string): { ok: false; failure: RuntimeFailure } {
  const { status } = res;
  if (status === 401 || status === 403) return { ok: false, failure: { kind: 'rejected', message: `${what}: the runtime refused the API key`, httpStatus: status } };
  const message = `${what}: ${runtimeMessage(res, `HTTP ${status}`)}`;
  if (status === 429) return { ok: false, failure: { kind: 'rejected', message, httpStatus: status, retryable: true } };
  if (status >= 500) return { ok: false, failure: { kind: 'unreachable', message, httpStatus: status, retryable: true } };
  if (status >= 400) return { ok: false, failure: { kind: 'rejected', message, httpStatus: status } };
  return { ok: false, failure: { kind: 'bad_response', message: `${what}: unexpected HTTP ${status}`, httpStatus: status } };
}

/** `{base}/webhook/{path}`; the path may have several segments but never `.`/`..`, a query or a fragment. */
function webhookUrl(runtime: RuntimeConnection, target: string): URL | null {
  const segments = target.replace(/^\/+/, '').split('/');
  if (segments.some((s) => s === '' || s === '.' || s === '..')) return null;
  return joinUrl(runtime.baseUrl, 'webhook', ...segments);
}

function resumeUrlOnRuntime(runtime: RuntimeConnection, tokenId: string): URL | null {
  let url: URL;
  let base: URL;
  try {
    url = new URL(tokenId);
    base = new URL(runtime.baseUrl);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  return url.origin === base.origin && url.username === '' && url.password === '' ? url : null;
}

function toWorkflowAnswer(outcome: Outcome<HeldAnswer>, aborted: boolean): WorkflowAnswer {
  if (outcome.ok) return answerFromHeld(outcome.value);
  return {
    status: 'failed',
    output: null,
    error: aborted ? 'aborted: the held call ended before the workflow answered' : outcome.failure.message,
    externalRunId: null,
    aborted,
  };
}

function delay(ms: number): Promise<null> {
  return new Promise((resolve) => setTimeout(() => resolve(null), ms).unref());
}
