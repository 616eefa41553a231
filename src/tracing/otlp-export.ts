// The OpenTelemetry SDK, started only when an OTLP endpoint is configured (config.ts `tracing`, the standard OTEL_*
// variables): a tracer provider with the standard sampler, spans batched and POSTed as OTLP/HTTP protobuf. The SDK's
// modules are imported here, on demand, so a service that exports nothing does not load them.
import { randomUUID } from 'node:crypto';
import { trace } from '@opentelemetry/api';
import type { Sampler } from '@opentelemetry/sdk-trace';
import type { TracingSettings } from '../config.ts';
import { serviceVersion } from '../lib/service-version.ts';
import { installTraceContext, markTracesExported } from './spans.ts';

export interface TraceExport {
  /** Sends the spans still buffered and stops the provider (the service's drain waits for it). */
  shutdown(): Promise<void>;
}

/** Starts recording and exporting spans for this process. One per process: the tracer provider is global. */
export async function startTraceExport(settings: TracingSettings): Promise<TraceExport> {
  const [{ TracerProvider, BatchSpanProcessor, ...samplers }, { OTLPTraceExporter }, { resourceFromAttributes }] = await Promise.all([
    import('@opentelemetry/sdk-trace'),
    import('@opentelemetry/exporter-trace-otlp-proto'),
    import('@opentelemetry/resources'),
  ]);
  installTraceContext();
  const ratio = new samplers.TraceIdRatioBasedSampler(settings.ratio);
  const SAMPLERS: Record<TracingSettings['sampler'], Sampler> = {
    always_on: new samplers.AlwaysOnSampler(),
    always_off: new samplers.AlwaysOffSampler(),
    traceidratio: ratio,
    parentbased_always_on: new samplers.ParentBasedSampler({ root: new samplers.AlwaysOnSampler() }),
    parentbased_always_off: new samplers.ParentBasedSampler({ root: new samplers.AlwaysOffSampler() }),
    parentbased_traceidratio: new samplers.ParentBasedSampler({ root: ratio }),
  };
  const provider = new TracerProvider({
    resource: resourceFromAttributes({
      'service.name': settings.serviceName,
      'service.version': serviceVersion(),
      'service.instance.id': randomUUID(), // this process: instances of one deployment told apart
    }),
    sampler: SAMPLERS[settings.sampler],
    spanProcessors: [new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url: settings.endpoint }), scheduledDelayMillis: settings.scheduleDelayMs })],
  });
  trace.setGlobalTracerProvider(provider);
  markTracesExported(true);
  return {
    async shutdown() {
      markTracesExported(false);
      await provider.shutdown();
      trace.disable();
    },
  };
}
