// The typed API client: every path, body and answer comes from the types the SDK generates from docs/openapi.json
// (`npm run sdk:types`; one generated copy for both). Same origin, so the session cookie rides along and no CORS
// is involved.
import createClient from 'openapi-fetch';
import type { components, paths } from '../../../packages/sdk/src/generated/openapi.ts';

export const api = createClient<paths>({
  baseUrl: '',
  credentials: 'same-origin',
});
// openapi-fetch sends Content-Type: application/json with every body. State-changing requests always carry one
// (EMPTY below when they have no fields): a cross-site page cannot send JSON without a preflight, which the service
// never grants; with the service's Origin check it keeps cookie-signed writes same-origin.

export type Schemas = components['schemas'];
export type Run = Schemas['AdminRun'];
export type RunDetail = Schemas['AdminRunDetail'];
export type Agent = Schemas['Agent'];
export type RunStatus = Run['status'];

export const RUN_STATUSES: readonly RunStatus[] = ['queued', 'running', 'waiting', 'completed', 'failed', 'cancelled'];

/** An API answer that is not a success, with the status the pages branch on (401 sign-in, 404 hide a feature). */
export class ApiFailure extends Error {
  /** The run the failed request created or named, when the error body says (spec: `runId` where a run exists). */
  readonly runId: number | null;
  constructor(readonly status: number, message: string, runId: number | null = null) {
    super(message);
    this.runId = runId;
  }
}

interface Answer<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** The answer's data, or an ApiFailure carrying the service's own message (the Error body's `error`). */
export async function unwrap<T>(call: Promise<Answer<T>>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  const message = typeof error === 'object' && error !== null && 'error' in error ? String((error as { error: unknown }).error) : response.statusText;
  if (response.status === 401) window.dispatchEvent(new Event('ars:signed-out'));
  const runId = typeof error === 'object' && error !== null && 'runId' in error && typeof (error as { runId: unknown }).runId === 'number' ? (error as { runId: number }).runId : null;
  throw new ApiFailure(response.status, withRetryHint(message || `HTTP ${response.status}`, response), runId);
}

/** A 429 says when to try again (issue 40 item 6): the service's Retry-After, in words. */
function withRetryHint(message: string, response: Response): string {
  const after = response.status === 429 ? Number(response.headers.get('retry-after')) : NaN;
  return Number.isFinite(after) && after >= 0 ? `${message} — try again in ${after} s` : message;
}

/** Bodies for POSTs that carry no fields: a JSON body keeps the content type honest (Fastify refuses an empty one). */
export const EMPTY = {} as never;

/** The JSON body an operation takes, from the generated schema. */
export type RequestBody<P extends keyof paths, M extends keyof paths[P]> = paths[P][M] extends { requestBody?: { content: { 'application/json': infer B } } } ? B : never;
