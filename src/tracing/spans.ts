// Traces (issue 39 item 2; decisions.md "Traces"). Written against the OpenTelemetry API only: until the SDK is
// started (otlp-export.ts, when OTEL_EXPORTER_OTLP_ENDPOINT is set) every tracer is a no-op and no span exists.
//
// What always works, SDK or not: a W3C `traceparent` a caller sends is taken as the request's context, passed on to
// the runtime calls made for it (n8n webhook calls, Trigger.dev triggers) and stored on the run it starts, so the
// run's later work (its outbound webhook deliveries; with the SDK, its status changes) joins the caller's trace.
// What it costs when neither is there: one header read per request and one check per outbound call — no async
// context is entered (Node 22's AsyncLocalStorage makes every promise pay once one is), no span is made.
import {
  context,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
} from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { suppressTracing, W3CTraceContextPropagator } from '@opentelemetry/core';

/** The service's tracer: the API's proxy, which becomes the SDK's tracer once that is registered. */
export const tracer = trace.getTracer('agent-run-service');

let contextInstalled = false;
let exporting = false;

/**
 * The process-wide context manager (AsyncLocalStorage, entered only by a request that carries a context) and the
 * W3C propagator. Idempotent: several service instances in one process (tests) share them.
 */
export function installTraceContext(): void {
  if (contextInstalled) return;
  contextInstalled = true;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
}

/** Whether spans are recorded and exported (the SDK is started). Set once by otlp-export.ts. */
export function tracesExported(): boolean {
  return exporting;
}

export function markTracesExported(on: boolean): void {
  exporting = on;
}

/**
 * Runs `fn` outside any request's context. Async resources made while a context was active keep it (a keep-alive
 * connection, a timer a request armed), so a request without a context of its own, or a background pass, could
 * otherwise run in an earlier request's. Entering the root context only when another is active keeps a service that
 * never sees a context from ever entering one.
 */
export function inRootContext<T>(fn: () => T): T {
  return context.active() === ROOT_CONTEXT ? fn() : context.with(ROOT_CONTEXT, fn);
}

/**
 * A background pass (a sweep, a poll, the outbox worker): its own statements and calls are not traced — an idle
 * service would otherwise export a trace every few seconds. What it does to a run is recorded in the run's trace
 * (recordInRunTrace, deliveries), whose context is given explicitly.
 */
export function inBackground<T>(fn: () => T): T {
  return exporting ? context.with(suppressTracing(ROOT_CONTEXT), fn) : inRootContext(fn);
}

/** The context a request's headers carry (`traceparent`, `tracestate`), or null without a valid one. */
export function contextFromHeaders(headers: Record<string, string | string[] | undefined>): Context | null {
  const extracted = propagation.extract(ROOT_CONTEXT, headers);
  const sc = trace.getSpanContext(extracted);
  return sc && isSpanContextValid(sc) ? extracted : null;
}

/** The active span's context as a `traceparent` (the propagator's own writing), to store on a run; null without one. */
export function activeTraceparent(): string | null {
  return injectTrace({}).traceparent ?? null;
}

/**
 * pino's mixin: a log line written in a traced context carries `trace_id` and `span_id` (OpenTelemetry's log
 * correlation fields), so a line of a request, a runtime call or a status change leads to its trace. Nothing else.
 */
export function traceFields(): Record<string, string> {
  const sc = trace.getSpanContext(context.active());
  return sc && isSpanContextValid(sc) ? { trace_id: sc.traceId, span_id: sc.spanId } : {};
}

/** A context continuing a stored `traceparent` (ROOT_CONTEXT when there is none, or it does not parse). */
export function contextOfTraceparent(traceparent: string | null | undefined): Context {
  if (!traceparent) return ROOT_CONTEXT;
  return contextFromHeaders({ traceparent }) ?? ROOT_CONTEXT;
}

/** Adds `traceparent` (and `tracestate`) of `ctx` to `headers`; nothing when it holds no span context. */
export function injectTrace(headers: Record<string, string>, ctx: Context = context.active()): Record<string, string> {
  if (trace.getSpanContext(ctx) !== undefined) propagation.inject(ctx, headers);
  return headers;
}

/** An outbound call's span: `headers` carry it to the callee. Without the SDK, they carry the active context as is. */
export interface ClientSpan {
  headers: Record<string, string>;
  /** Ends the span with the answer's status, or with what went wrong (a transport failure). */
  end(outcome: { status?: number; error?: string }): void;
}

const NOT_RECORDED: ClientSpan['end'] = () => {};

/** Starts a CLIENT span for one outbound call, a child of `parent` (the active context by default). */
export function startClientSpan(name: string, attributes: Attributes, parent: Context = context.active()): ClientSpan {
  if (!exporting) return { headers: injectTrace({}, parent), end: NOT_RECORDED };
  const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
  return {
    headers: injectTrace({}, trace.setSpan(parent, span)),
    end: ({ status, error }) => {
      if (status !== undefined) span.setAttribute('http.response.status_code', status);
      if (error !== undefined || (status !== undefined && status >= 500)) span.setStatus({ code: SpanStatusCode.ERROR, message: error });
      span.end();
    },
  };
}

/**
 * A moment in a run's life recorded in the run's own trace (a status change made by a callback, a poll or an
 * alert), linked to the work that made it (a callback request's own trace): a runtime calling back carries no
 * trace context of ours, so this is how the way back joins the trace that started the run.
 */
export function recordInRunTrace(name: string, traceparent: string | null | undefined, attributes: Attributes): void {
  if (!exporting || !traceparent) return;
  const parent = contextOfTraceparent(traceparent);
  if (parent === ROOT_CONTEXT) return;
  const here = trace.getSpanContext(context.active());
  const links = here && isSpanContextValid(here) ? [{ context: here }] : undefined;
  tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes, links }, parent).end();
}

