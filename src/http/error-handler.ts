// Maps every failure to the closed set of error codes (errors.ts). Validation failures name the field; 5xx bodies
// never carry internals; nothing from a request (secrets included) is echoed back beyond the field name.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError, errorBody, errors, type ErrorCode } from '../errors.ts';
import { isDatabaseUnavailable } from '../storage/db-unavailable.ts';
import { redactUrl } from './log-redaction.ts';
import { noteRun } from './request-log.ts';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** How this endpoint reports a body that fails its schema: 400 (default) or 422 (spec 4.4, 4.8). */
    validationCode?: 'invalid_body' | 'validation_failed';
  }
}

export function toApiError(err: FastifyError, req: FastifyRequest): ApiError {
  if (err instanceof ApiError) return err;
  if (err.validation) {
    const first = err.validation[0];
    const where = err.validationContext ?? 'body';
    const field = first ? `${where}${first.instancePath.replace(/\//g, '.')}` : where;
    const missing = first?.keyword === 'required' ? `.${String(first.params.missingProperty)}` : '';
    // A header is not the body: a malformed one is 400 wherever (the body's code may be 422, spec 4.2).
    const code = where === 'headers' ? 'invalid_header' : (req.routeOptions.config?.validationCode ?? 'invalid_body');
    return new ApiError(code, `${field}${missing} ${first?.keyword === 'required' ? 'is required' : (first?.message ?? 'is invalid')}`);
  }
  const byFastifyCode: Record<string, [ErrorCode, string]> = {
    FST_ERR_CTP_INVALID_JSON_BODY: ['invalid_json', 'request body is not valid JSON'],
    FST_ERR_CTP_EMPTY_JSON_BODY: ['invalid_json', 'request body is empty but declared as JSON'],
    FST_ERR_CTP_BODY_TOO_LARGE: ['payload_too_large', 'request body is too large'],
    FST_ERR_CTP_INVALID_MEDIA_TYPE: ['invalid_body', 'unsupported content type; send application/json'],
    FST_ERR_CTP_INVALID_CONTENT_LENGTH: ['invalid_body', 'content-length does not match the body'],
  };
  const mapped = err.code ? byFastifyCode[err.code] : undefined;
  if (mapped) return new ApiError(mapped[0], mapped[1]);
  if (err instanceof SyntaxError || err.statusCode === 400) return new ApiError('invalid_json', 'request body is not valid JSON');
  if (err.statusCode === 413) return new ApiError('payload_too_large', 'request body is too large');
  if (err.statusCode && err.statusCode >= 400 && err.statusCode < 500) return new ApiError('invalid_body', 'bad request');
  // Nothing about the database goes into the body: the driver's message may name its host.
  if (isDatabaseUnavailable(err)) return errors.unavailable('service_unavailable', 'the database is unavailable; retry later');
  return new ApiError('internal', 'internal error');
}

/** The one way an error is answered: its status, its extra headers and the body of errors.ts. */
export function sendError(reply: FastifyReply, apiError: ApiError): FastifyReply {
  const headers = apiError.extra.headers;
  if (headers) for (const k in headers) reply.header(k, headers[k]);
  return reply.code(apiError.status).type('application/json; charset=utf-8').send(errorBody(apiError, reply.request.id));
}

function errCode(err: unknown): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
    const apiError = toApiError(err, req);
    if (apiError.extra.runId !== undefined) noteRun(req, apiError.extra.runId);
    // Told on the request's one line (request-log.ts). An outage is expected to pass: its reason, without the stack.
    if (apiError.code === 'service_unavailable') req.failure = { level: 'warn', fields: { code: apiError.code, dbCode: errCode(err), reason: err.message } };
    else if (apiError.status >= 500 && !(err instanceof ApiError)) req.failure = { level: 'error', fields: { code: apiError.code, err } };
    else if (apiError.status >= 500) req.failure = { level: 'warn', fields: { code: apiError.code, reason: apiError.message } };
    return sendError(reply, apiError);
  });
  app.setNotFoundHandler((req, reply) => {
    // A browser that lands on a page nobody serves gets a page (issue 40 item 6: it showed raw JSON); every API
    // client, and anything under /api, gets the JSON error.
    if (wantsPage(req)) {
      return reply.code(404).header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'").header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_FOUND_PAGE);
    }
    // The path may hold a webhook token (spec 4.6): echoed masked, like in the logs.
    reply.code(404).send(errorBody(new ApiError('not_found', `no route for ${req.method} ${redactUrl(req.url.split('?')[0]!)}`), req.id));
  });
}

/** A GET from a browser navigating (it prefers HTML) to a path outside the API. */
function wantsPage(req: FastifyRequest): boolean {
  if (req.method !== 'GET' || req.url.startsWith('/api/') || req.url === '/api') return false;
  const accept = req.headers.accept ?? '';
  return /\btext\/html\b/.test(accept);
}

/** No script, nothing from the request echoed: the path could hold a secret. */
const NOT_FOUND_PAGE = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>Page not found · Agent Run Service</title>
<style>body{font:16px/1.5 system-ui,sans-serif;max-width:36rem;margin:4rem auto;padding:0 1rem;color:#1a1a1a}a{color:#0b57d0}</style></head>
<body><main><h1>Page not found</h1>
<p>Nothing is served at this address.</p>
<p><a href="/runs">Open the console</a> · <a href="/docs">API reference</a></p></main></body></html>
`;
