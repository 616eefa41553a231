// Trigger.dev's vocabulary, read and written (runtimes.md "Trigger.dev"): what a task's return value becomes, the
// tag that ties a Trigger.dev run or waitpoint token to our run, the text of its errors and log events, and what
// its refusals mean. Pure functions: trigger-dev-adapter.ts makes the calls.
import type { RuntimeFailure, RuntimeLogEntry, TaskPayload } from './runtime-adapter.ts';
import { runtimeMessage, type ApiResponse } from './http.ts';
import { runtimeDate } from '../lib/timestamps.ts';

/**
 * A task's return value as the run's output_data, which the contract types as an object or null (issue 36,
 * decisions.md "Task return values"): an object is kept as it is; a string, number, boolean or array is wrapped as
 * `{"value": …}`, so it is neither lost nor stored as something the API says cannot be there; nothing (undefined,
 * null) is null.
 */
export function taskOutput(value: unknown): Record<string, unknown> | null {
  if (value === undefined || value === null) return null;
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  return { value };
}

/** Unique across deployments sharing one Trigger.dev project: this deployment's id and the run id. */
export function runKey(p: Pick<TaskPayload, 'runId' | 'deploymentId'>): string {
  return p.deploymentId ? `${p.deploymentId}:${p.runId}` : String(p.runId);
}

export const RUN_TAG_PREFIX = 'ars_run:';

/** Tags are at most 128 characters; a uuid and a run id fit. */
export function runTag(key: string): string {
  return `${RUN_TAG_PREFIX}${key}`;
}

/**
 * The tag a task puts on a waitpoint token it creates for this run (`wait.createToken({tags: [...]})`), the same
 * as the run's own tag: `/waitpoint` then refuses to complete the token for any other run (issue 12).
 */
export function waitpointTag(p: Pick<TaskPayload, 'runId' | 'deploymentId'>): string {
  return runTag(runKey(p));
}

/**
 * A short text for a Trigger.dev error, whichever shape it has (issue 36 item 6): the retrieve API's
 * `{message, name?, stackTrace?}`, or the TaskRunError an alert carries — `{type: "BUILT_IN_ERROR", name, message,
 * stackTrace}`, `{type: "CUSTOM_ERROR" | "STRING_ERROR", raw}` or `{type: "INTERNAL_ERROR", code, message?}`
 * (worded as the retrieve API words it: `trigger.dev internal error (<code>)`). null when it says nothing.
 */
export function triggerErrorText(error: unknown, max = 500): string | null {
  if (typeof error === 'string') return textOf(error, max);
  if (error === null || typeof error !== 'object') return null;
  const e = error as { type?: unknown; message?: unknown; name?: unknown; raw?: unknown; code?: unknown };
  if (e.type === 'CUSTOM_ERROR' || e.type === 'STRING_ERROR') return textOf(e.raw, max) ?? textOf(e.message, max);
  if (e.type === 'INTERNAL_ERROR') {
    const code = textOf(e.code, 100);
    const message = textOf(e.message, max);
    if (message && code) return `${message} (${code})`.slice(0, max);
    return message ?? (code ? `trigger.dev internal error (${code})` : null);
  }
  return textOf(e.message, max) ?? textOf(e.name, max) ?? textOf(e.raw, max);
}

function textOf(v: unknown, max: number): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v.slice(0, max) : null;
}

/**
 * Issue 36 item 8: a preview environment's key (`tr_preview_…`) finds its environment only with the branch in
 * `x-trigger-branch`. The runtime record carries no branch (decisions.md "Runtimes"): a preview branch lives as long
 * as a pull request, a registered runtime much longer. Such a key is refused by Trigger.dev, and the failure says why.
 */
export const PREVIEW_KEY_REFUSED = 'the runtime refused the secret key: a preview-branch key (tr_preview_…) needs a branch, which runtimes do not carry; use the key of a development, staging or production environment';

export function failureFor(res: ApiResponse, what: string, apiKey: string): { ok: false; failure: RuntimeFailure } {
  const { status, headers } = res;
  const failure: RuntimeFailure = { kind: 'rejected', message: `${what}: ${runtimeMessage(res, `HTTP ${status}`)}`, httpStatus: status };
  if (status === 401 && apiKey.startsWith('tr_preview_')) failure.message = `${what}: ${PREVIEW_KEY_REFUSED}`;
  else if (status === 401 || status === 403) failure.message = `${what}: the runtime refused the secret key`;
  else if (status === 429) {
    // Trigger.dev sends no Retry-After, only x-ratelimit-reset in epoch milliseconds (⚠).
    failure.retryable = true;
    const reset = Number(headers['x-ratelimit-reset']);
    const retryAt = reset > 0 ? runtimeDate(reset) : null;
    if (retryAt) failure.retryAt = retryAt;
    failure.message = `${what}: rate limited by the task runtime`;
  } else if (status >= 500) {
    Object.assign(failure, { kind: 'unreachable', retryable: true });
  } else if (status < 400) {
    failure.kind = 'bad_response';
  }
  return { ok: false, failure };
}


interface TriggerEvent {
  message?: unknown;
  level?: unknown;
  startTime?: unknown;
  duration?: unknown;
  isError?: unknown;
}

export function toLogEntry(raw: unknown): RuntimeLogEntry {
  const e = (raw ?? {}) as TriggerEvent;
  const isError = e.isError === true;
  return {
    time: eventTime(e.startTime),
    level: typeof e.level === 'string' ? e.level.toLowerCase() : isError ? 'error' : 'info',
    message: typeof e.message === 'string' ? e.message : '',
    isError,
    // Span durations are OpenTelemetry nanoseconds.
    durationMs: typeof e.duration === 'number' ? Math.round(e.duration / 1e6) : null,
  };
}

/** Event start times arrive as ISO strings or as epoch nanoseconds (number or digit string). */
function eventTime(v: unknown): string | null {
  if (typeof v === 'string' && !/^\d+$/.test(v)) return runtimeDate(v)?.toISOString() ?? null;
  const n = Number(v);
  if (!Number.isFinite(n) || n <= 0) return null;
  const ms = n > 1e15 ? n / 1e6 : n;
  return new Date(ms).toISOString();
}
