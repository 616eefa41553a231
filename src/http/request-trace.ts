// Issue 39 item 2: every request in the caller's trace. A W3C `traceparent` (and `tracestate`) is accepted on
// every endpoint; when spans are recorded the request is a SERVER span, a child of the caller's span if one was
// sent; the rest of the request (its statements, its runtime calls, the run it starts) runs in that context.
// Neither a header nor the SDK: the hook does nothing else (tracing/spans.ts says why that matters).
import { context, SpanKind, SpanStatusCode, trace, ROOT_CONTEXT, type Span } from '@opentelemetry/api';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { contextFromHeaders, inRootContext, tracer, tracesExported } from '../tracing/spans.ts';
import { redactUrl } from './log-redaction.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's SERVER span while spans are recorded. */
    traceSpan: Span | null;
  }
}

/**
 * The request line's trace fields: its span's, or the caller's context when none is recorded. Set explicitly (even
 * to undefined, which drops them): the line is written from the response's `finish`, whose async context may be an
 * earlier request's on the same connection, and the logger's mixin (tracing/spans.ts traceFields) would take that.
 */
export function requestTraceFields(req: FastifyRequest): { trace_id: string | undefined; span_id: string | undefined } {
  const sc = req.traceSpan?.spanContext() ?? (req.headers.traceparent === undefined ? undefined : trace.getSpanContext(contextFromHeaders(req.headers) ?? ROOT_CONTEXT));
  return { trace_id: sc?.traceId, span_id: sc?.spanId };
}

export function traceRequests(app: FastifyInstance): void {
  app.decorateRequest('traceSpan', null);
  app.addHook('onRequest', (req, _reply, done) => {
    const exporting = tracesExported();
    if (!exporting && req.headers.traceparent === undefined) return inRootContext(done);
    const parent = contextFromHeaders(req.headers) ?? ROOT_CONTEXT;
    if (!exporting) return context.with(parent, done);
    const route = req.routeOptions.url;
    const span = tracer.startSpan(
      route ? `${req.method} ${route}` : req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          ...(route ? { 'http.route': route } : {}),
          'url.path': redactUrl(req.url.split('?')[0]!), // masked: webhook tokens and frame passes travel in paths
          'ars.request_id': req.id,
        },
      },
      parent,
    );
    req.traceSpan = span;
    context.with(trace.setSpan(parent, span), done);
  });
  app.addHook('onResponse', (req, reply, done) => {
    const span = req.traceSpan;
    if (span) {
      span.setAttribute('http.response.status_code', reply.statusCode);
      if (req.loggedRunId !== null) span.setAttribute('ars.run_id', req.loggedRunId);
      if (reply.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
    done();
  });
  // A caller that hung up before its answer: the span ends now (the answer, if one is still written, adds nothing).
  app.addHook('onRequestAbort', (req, done) => {
    req.traceSpan?.setAttribute('ars.caller_gone', true);
    req.traceSpan?.end();
    req.traceSpan = null;
    done();
  });
}
