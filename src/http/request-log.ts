// Issue 39 item 1: one log line per request, written once its answer has gone: method, route pattern, masked URL,
// status, duration, request id, and the agent and run it concerned where known. A failure is that same line (at
// warn or error, with what went wrong), not a line of its own beside it. Never a header, a body or a token: the URL
// is masked (webhook tokens, frame passes) and nothing else of the request is read.
//
// ARS_REQUEST_LOG chooses which answers get a line: `all` (the default), `errors` (4xx and 5xx) or `server_errors`.
// The line is written by the root logger with the request id as a field, so a request that logs nothing else costs
// no child logger (lazy-request-logger.ts). The id is the caller's `X-Request-Id` when it has a sane form.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { redactUrl } from './log-redaction.ts';
import { requestTraceFields } from './request-trace.ts';
import type { RequestLogSetting } from '../config.ts';


/** What went wrong, for the request's line (set by the error handler instead of a line of its own). */
export interface RequestFailure {
  level: 'warn' | 'error';
  fields: Record<string, unknown>;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The run this request concerned, when its route learnt it (a started run, an error naming one). */
    loggedRunId: number | null;
    failure: RequestFailure | null;
  }
}

/** A caller's id worth keeping: short, and nothing a log viewer or a header could misread. */
const SANE_REQUEST_ID = /^[A-Za-z0-9][A-Za-z0-9._:=+/@-]{0,127}$/;

/** Fastify's genReqId: the caller's X-Request-Id when sane (kept and echoed), else one of ours. */
export function requestIdFrom(next: () => string): (raw: IncomingMessage) => string {
  return (raw) => {
    const offered = raw.headers['x-request-id'];
    return typeof offered === 'string' && SANE_REQUEST_ID.test(offered) ? offered : next();
  };
}

/** Notes the run a request concerned, for its line. */
export function noteRun(req: FastifyRequest, runId: number | string): void {
  req.loggedRunId = Number(runId);
}

export function logRequests(app: FastifyInstance, setting: RequestLogSetting): void {
  app.decorateRequest('loggedRunId', null);
  app.decorateRequest('failure', null);
  const log = app.ctx.log;
  const floor = setting === 'all' ? 0 : setting === 'errors' ? 400 : 500;
  app.addHook('onResponse', (req, reply, done) => {
    const status = reply.statusCode;
    app.ctx.metrics.request(req.method, req.routeOptions.url, status, reply.elapsedTime);
    if (status >= floor || req.failure) {
      const params = req.params as { runId?: unknown } | undefined;
      const runId = req.loggedRunId ?? (params?.runId !== undefined && /^\d+$/.test(String(params.runId)) ? Number(params.runId) : undefined);
      const line = {
        reqId: req.id,
        method: req.method,
        route: req.routeOptions.url ?? null,
        url: redactUrl(req.url),
        statusCode: status,
        ms: Math.round(reply.elapsedTime * 10) / 10,
        ...(req.agent && { agentId: req.agent.id }),
        ...(runId !== undefined && { runId }),
        ...requestTraceFields(req),
        ...req.failure?.fields,
      };
      const level = req.failure?.level ?? (status >= 500 ? 'warn' : 'info');
      log[level](line, status >= 500 ? 'request failed' : 'request completed');
    }
    done();
  });
}
