// How a route's answers reach the OpenAPI document. Auth follows where a route is registered (house style 2), and
// so does its documentation: each credential context calls documentRoutes once, and every route registered in it
// gets the context's tag, its security requirement and the error answers the context itself gives (its auth
// failure, a body that is not JSON, an outage). A route adds only its own: its success answers (`response`) and the
// error codes its handler raises (`errors`).
import type { FastifyInstance } from 'fastify';
import type { TSchema } from 'typebox';
import { statusOf, type ErrorCode } from '../errors.ts';
import { answer, ErrorBody } from '../schemas/responses.ts';

declare module 'fastify' {
  interface FastifySchema {
    /** The error codes this route's handler answers, besides its context's (documentRoutes makes them responses). */
    errors?: readonly ErrorCode[];
  }
}

/** One line per code for the document: what the caller should understand by it. */
const MEANING: Record<ErrorCode, string> = {
  invalid_body: 'the body, query or path fails validation; the message names the field',
  invalid_json: 'the body is not valid JSON',
  invalid_url: 'a malformed `url` in a waiting callback',
  unauthorized: 'missing or invalid credential',
  not_eligible: 'the agent is not eligible (a toggle is off, or it is not of the right kind)',
  forbidden: 'the credential is valid but may not do this',
  not_found: 'no such resource, or not visible to this credential',
  conflict: 'the resource is in a state that refuses this (already exists, already terminal)',
  backward_transition: 'the run is already past the requested status (spec part 3 rule 1)',
  waitpoint_unavailable: 'the run is not waiting on a token, or its runtime has no waitpoints or refused the completion',
  request_timeout: 'the request did not arrive in time',
  payload_too_large: 'the body is over the size limit',
  validation_failed: 'the body fails validation; the message names the field',
  agent_unavailable: 'the agent is not platform-managed, not active, has the wrong output kind or runtime',
  rate_limited: 'over the per-minute limit; retry after Retry-After seconds',
  headers_too_large: 'the request headers are too large',
  runtime_failed: 'the runtime could not be invoked; the run is failed',
  internal: 'an unexpected error; the body carries no detail',
  run_failed: 'the run failed or was cancelled (or a download answered JSON); the run is failed',
  upstream_failed: 'a third party (runtime, OAuth provider, zone app) refused or could not be reached',
  not_ready: 'the instance cannot serve yet (database unreachable or migrations pending)',
  service_unavailable: 'the database is unavailable; retry after Retry-After seconds',
  upstream_timeout: 'the zone app did not answer in time',
  runtime_timeout: 'the runtime did not answer within the wait window; the run is failed',
  invalid_header: 'a request header fails validation (e.g. a malformed Idempotency-Key); the message names it',
  idempotency_key_reused: 'the Idempotency-Key was first used with another request; nothing was done',
  download_not_replayable: 'the Idempotency-Key belongs to a download that has begun or ended: a file is streamed once',
};

export interface ContextDoc {
  /** The document's tag for this area. */
  tag: string;
  /** Security requirement objects of the credentials this context reads; `[]` when it reads none. */
  security: Array<Record<string, string[]>>;
  /** What the context's own hooks answer, typically its credential check. */
  errors: readonly ErrorCode[];
  /** False where no route of the context can fail for the database (probes, metrics): no 503 is declared. */
  usesDatabase?: boolean;
  /** True where bodies are taken as raw bytes, never parsed as JSON (webhooks, alerts, the zone proxy). */
  rawBodies?: boolean;
}

/** Tags, security and error answers for every route registered in `app` from now on (not the hidden ones). */
export function documentRoutes(app: FastifyInstance, doc: ContextDoc): void {
  app.addHook('onRoute', (route) => {
    const { errors = [], ...schema } = route.schema ?? {};
    if (schema.hide) return;
    const codes = new Set<ErrorCode>([...doc.errors, ...errors, 'internal']);
    if (doc.usesDatabase !== false) codes.add('service_unavailable');
    if (schema.body || schema.querystring) codes.add(route.config?.validationCode ?? 'invalid_body');
    // Any request but GET and HEAD may carry a body, which Fastify parses before the handler runs: bad JSON, an
    // unsupported content type (400 invalid_body) or too many bytes are answered whether the route wants one or not.
    const mayCarryBody = [route.method].flat().some((m) => m !== 'GET' && m !== 'HEAD');
    if (mayCarryBody && !doc.rawBodies) codes.add('invalid_json').add('invalid_body').add('payload_too_large');
    const ok = (schema.response ?? {}) as Record<string, TSchema>;
    route.schema = { tags: [doc.tag], security: doc.security, ...schema, response: { ...errorResponses([...codes]), ...ok } };
  });
}

/** The shared Error body once per status, its description naming the codes this route answers with it. */
function errorResponses(codes: readonly ErrorCode[]): Record<string, TSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of codes) byStatus.set(statusOf(code), [...(byStatus.get(statusOf(code)) ?? []), code]);
  const responses: Record<string, TSchema> = {};
  for (const [status, list] of [...byStatus].sort(([a], [b]) => a - b)) {
    responses[status] = answer(ErrorBody, list.map((c) => `\`${c}\`: ${MEANING[c]}.`).join(' '));
  }
  return responses;
}
