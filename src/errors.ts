// One closed set of error codes, mapped to HTTP statuses in this one place (decisions.md "Errors").
// Every error body is { error, code, requestId } plus runId wherever a run exists.

const STATUS_BY_CODE = {
  invalid_body: 400, // validation failure where the endpoint answers 400 (admin API, trigger-and-download, …)
  invalid_json: 400,
  invalid_url: 400, // spec 4.8: a malformed `url` in a waiting callback
  invalid_header: 400, // a malformed request header (Idempotency-Key)
  unauthorized: 401,
  not_eligible: 403, // agent toggles off / not eligible (spec part 7)
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  backward_transition: 409, // spec part 3 rule 1
  waitpoint_unavailable: 409, // spec 4.9 / part 7
  download_not_replayable: 409, // an Idempotency-Key whose download began: a file is streamed once
  request_timeout: 408, // the request did not arrive within ARS_REQUEST_TIMEOUT_MS (http/slow-clients.ts)
  payload_too_large: 413,
  validation_failed: 422, // validation failure where the endpoint answers 422 (register, callback)
  agent_unavailable: 422, // not platform-managed, not active, wrong output kind, runtime unsupported
  idempotency_key_reused: 422, // an Idempotency-Key already used for another endpoint or body
  rate_limited: 429,
  headers_too_large: 431,
  runtime_failed: 500, // the runtime could not be invoked (spec part 7)
  internal: 500,
  run_failed: 502, // synchronous call: the run failed or was cancelled; runtime answered JSON for a download
  upstream_failed: 502, // admin logs / credentials: a third party refused
  not_ready: 503, // /readyz: the database is unreachable or migrations are pending
  service_unavailable: 503, // any other request: the database is unreachable or did not answer in time
  upstream_timeout: 504, // zone proxy: the zone app did not answer in time
  runtime_timeout: 504,
} as const;

export type ErrorCode = keyof typeof STATUS_BY_CODE;

/** Every code, in the order above (the OpenAPI document lists them as the `Error` body's `code` enum). */
export const ERROR_CODES = Object.keys(STATUS_BY_CODE) as ErrorCode[];

export function statusOf(code: ErrorCode): number {
  return STATUS_BY_CODE[code];
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
    this.status = STATUS_BY_CODE[code];
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
