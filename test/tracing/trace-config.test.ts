// Issue 39 item 2: the OpenTelemetry SDK's standard variables, as config.ts reads them. Traces are exported only
// when an endpoint is set; what the service does not offer is refused at start, naming the variable.
import { describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/config.ts';

const load = (env: Record<string, string>) => loadConfig({ ARS_DATA_DIR: '/tmp/ars-trace-config', ...env });
const problems = (env: Record<string, string>): string[] => {
  try {
    load(env);
    return [];
  } catch (err) {
    return (err as ConfigError).problems;
  }
};

describe('tracing settings (OTEL_*)', () => {
  it('none without an endpoint: nothing is recorded', () => {
    expect(load({}).tracing).toBeNull();
  });

  it('the base endpoint gets /v1/traces; the traces endpoint is used as it is', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing).toEqual({
      endpoint: 'http://collector:4318/v1/traces', serviceName: 'agent-run-service', sampler: 'parentbased_always_on', ratio: 1, scheduleDelayMs: 5_000,
    });
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'https://b/otlp/traces' }).tracing?.endpoint).toBe('https://b/otlp/traces');
  });

  it('OTEL_SDK_DISABLED=true and OTEL_TRACES_EXPORTER=none turn it off whatever the endpoint', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_SDK_DISABLED: 'true' }).tracing).toBeNull();
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing).toBeNull();
  });

  it('the sampler, its ratio, the service name and the batch delay are read', () => {
    expect(load({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4318', OTEL_TRACES_SAMPLER: 'parentbased_traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25', OTEL_SERVICE_NAME: 'runs-eu', OTEL_BSP_SCHEDULE_DELAY: '1000' }).tracing)
      .toMatchObject({ sampler: 'parentbased_traceidratio', ratio: 0.25, serviceName: 'runs-eu', scheduleDelayMs: 1_000 });
  });

  it('what is not offered is one line each, naming the variable', () => {
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c:4317', OTEL_EXPORTER_OTLP_PROTOCOL: 'grpc' })).toEqual([
      'OTEL_EXPORTER_OTLP_PROTOCOL must be http/protobuf, the only OTLP protocol offered (got "grpc")',
    ]);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' })).toEqual(['OTEL_EXPORTER_OTLP_ENDPOINT must be an http(s) URL (got "collector:4318")']);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_EXPORTER: 'zipkin' })).toEqual(['OTEL_TRACES_EXPORTER must be otlp or none (got "zipkin")']);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_SAMPLER: 'jaeger_remote' })[0]).toMatch(/^OTEL_TRACES_SAMPLER must be one of/);
    expect(problems({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://c', OTEL_TRACES_SAMPLER_ARG: '2' })).toEqual(['OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "2")']);
  });
});
