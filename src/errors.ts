// One closed set of error codes, mapped to HTTP statuses in this one place (decisions.md "Errors").
// Every error body is { error, code, requestId } plus runId wherever a run exists.

/** Each code's status and what it means to a caller: docs/api.md's "Errors" table is made from this (errorTable). */
const CODES = {
  invalid_body: { status: 400, meaning: 'validation; where the endpoint answers 400' },
  invalid_json: { status: 400, meaning: '' },
  invalid_url: { status: 400, meaning: 'callback `url`' }, // spec 4.8: a malformed `url` in a waiting callback
  invalid_header: { status: 400, meaning: 'a malformed `Idempotency-Key`' },
  unauthorized: { status: 401, meaning: '' },
  not_eligible: { status: 403, meaning: 'agent toggles, kind' }, // spec part 7
  forbidden: { status: 403, meaning: 'a valid credential that may not do this' },
  not_found: { status: 404, meaning: '' },
  conflict: { status: 409, meaning: '' },
  backward_transition: { status: 409, meaning: '' }, // spec part 3 rule 1
  waitpoint_unavailable: { status: 409, meaning: '' }, // spec 4.9 / part 7
  download_not_replayable: { status: 409, meaning: 'an `Idempotency-Key` whose download already began' },
  request_timeout: { status: 408, meaning: 'the request did not arrive within `ARS_REQUEST_TIMEOUT_MS`' }, // http/slow-clients.ts
  payload_too_large: { status: 413, meaning: '' },
  validation_failed: { status: 422, meaning: 'register, callback, trigger-and-wait' },
  agent_unavailable: { status: 422, meaning: 'not platform-managed, not active, wrong output kind or runtime' },
  idempotency_key_reused: { status: 422, meaning: 'an `Idempotency-Key` already used for another endpoint or body' },
  rate_limited: { status: 429, meaning: 'with `Retry-After`' },
  headers_too_large: { status: 431, meaning: '' },
  runtime_failed: { status: 500, meaning: 'the runtime could not be invoked; the run is failed' }, // spec part 7
  internal: { status: 500, meaning: '' },
  run_failed: { status: 502, meaning: 'synchronous: the run failed or was cancelled' },
  upstream_failed: { status: 502, meaning: 'a runtime, OAuth provider or zone app refused' },
  not_ready: { status: 503, meaning: '`/readyz`: the database is unreachable or migrations are pending; with `Retry-After`' },
  service_unavailable: { status: 503, meaning: 'the database is unreachable or did not answer in time; with `Retry-After`' },
  upstream_timeout: { status: 504, meaning: 'zone app' },
  runtime_timeout: { status: 504, meaning: 'no runtime answer within the window; the run is failed' },
} as const satisfies Record<string, { status: number; meaning: string }>;

export type ErrorCode = keyof typeof CODES;

/** Every code, in the order above (the OpenAPI document lists them as the `Error` body's `code` enum). */
export const ERROR_CODES = Object.keys(CODES) as readonly ErrorCode[];

export function statusOf(code: ErrorCode): number {
  return CODES[code].status;
}

/** docs/api.md's "Errors" table: each status with its codes and what they mean (test/http/api-reference.test.ts). */
export function errorTable(): string {
  const byStatus = new Map<number, string[]>();
  for (const code of ERROR_CODES) {
    const { status, meaning } = CODES[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), meaning ? `\`${code}\` (${meaning})` : `\`${code}\``]);
  }
  const rows = [...byStatus].sort(([a], [b]) => a - b).map(([status, codes]) => `| ${status} | ${codes.join(', ')} |`);
  return ['| Status | Codes |', '|---|---|', ...rows].join('\n');
}

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly extra: { runId?: number; headers?: Record<string, string> } = {},
  ) {
    // Expected outcomes (401, 429, 409 …) need no stack trace, and capturing one was a measurable share of the
    // cost of a 429 (bench). Surprises are plain Errors and keep theirs.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(message);
    Error.stackTraceLimit = limit;
    this.status = CODES[code].status;
  }
}

/** Seconds a 503 asks the caller to wait: about how long a database restart or failover takes. */
export const RETRY_AFTER_UNAVAILABLE_S = 5;

/** Factories for the errors raised in more than one place. */
export const errors = {
  unauthorized: (what = 'missing or invalid bearer token') => new ApiError('unauthorized', what),
  notFound: (what: string) => new ApiError('not_found', `${what} not found`),
  notEligible: (why: string) => new ApiError('not_eligible', why),
  agentUnavailable: (why: string) => new ApiError('agent_unavailable', why),
  invalid: (field: string, problem: string, code: 'invalid_body' | 'validation_failed' = 'invalid_body') =>
    new ApiError(code, `${field} ${problem}`),
  backwardTransition: (runId: number, from: string, to: string) =>
    new ApiError('backward_transition', `run ${runId} is ${from}; it cannot move to ${to}`, { runId }),
  conflict: (why: string) => new ApiError('conflict', why),
  rateLimited: (retryAfterSeconds: number) =>
    new ApiError('rate_limited', `rate limit exceeded; retry in ${retryAfterSeconds} s`, {
      headers: { 'retry-after': String(retryAfterSeconds) },
    }),
  runtimeFailed: (runId: number, why: string) => new ApiError('runtime_failed', `runtime invocation failed: ${why}`, { runId }),
  runFailed: (runId: number, why: string) => new ApiError('run_failed', why, { runId }),
  /** Both 503s tell the caller when to come back. */
  unavailable: (code: 'not_ready' | 'service_unavailable', why: string) =>
    new ApiError(code, why, { headers: { 'retry-after': String(RETRY_AFTER_UNAVAILABLE_S) } }),
  runtimeTimeout: (runId: number) =>
    new ApiError('runtime_timeout', 'the runtime did not respond within the wait window', { runId }),
} as const;

export interface ErrorBody {
  error: string;
  code: ErrorCode;
  requestId: string;
  runId?: number;
}

export function errorBody(err: ApiError, requestId: string): ErrorBody {
  const body: ErrorBody = { error: err.message, code: err.code, requestId };
  if (err.extra.runId !== undefined) body.runId = err.extra.runId;
  return body;
}
