// Issue 39 item 2, against a REAL n8n: a /trigger with the caller's traceparent is one trace in the receiver — the
// request's SERVER span, the n8n webhook call as its CLIENT child (whose context n8n's Webhook node received), and
// the run's completion when n8n's answer came back. Runs only beside a real n8n (.ci/real-n8n.sh).
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventually } from '../faults/service-process.ts';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver } from '../helpers/otlp-receiver.ts';
import { createAgent, NO_REAL_N8N, nodeOutput, settledExecution, startServiceOnN8n, VERSION, type ServiceOnN8n } from './real-n8n.ts';

describe.skipIf(NO_REAL_N8N)(`traces through a real n8n ${VERSION}`, () => {
  let s: ServiceOnN8n;
  let receiver: OtlpReceiver;
  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    s = await startServiceOnN8n({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '200' });
  }, 120_000);

  afterAll(async () => {
    await s?.service.stop();
    await s?.storage.drop();
    await receiver?.close();
  });

  it('/trigger → the n8n webhook call (a child span; n8n gets its traceparent) → the run completed, all in the caller\'s trace', async () => {
    const agent = await createAgent(s, 'traced json agent', 'ars-example-json-agent');
    const traceId = randomBytes(16).toString('hex');
    const callerSpanId = randomBytes(8).toString('hex');
    const res = await fetch(`${s.service.url}/api/agents/${agent.id}/runs/trigger`, {
      method: 'POST',
      headers: { authorization: agent.ingest, 'content-type': 'application/json', traceparent: `00-${traceId}-${callerSpanId}-01` },
      body: JSON.stringify({ input: { text: 'traced all the way through' } }),
    });
    expect(res.status).toBe(201);
    const { runId } = (await res.json()) as { runId: number };
    const run = await eventually(async () => (await s.service.api('GET', `/api/admin/runs/${runId}`)).json, (r) => r.status === 'completed', 30_000);
    expect(run.status).toBe('completed');

    const inTrace = () => receiver.spans.filter((x) => x.traceId === traceId);
    await receiver.waitFor(() => ['run completed', 'n8n webhook'].every((name) => inTrace().some((x) => x.name === name)) && inTrace().some((x) => x.kind === SPAN_KIND.server));
    const server = inTrace().find((x) => x.kind === SPAN_KIND.server)!;
    expect(server).toMatchObject({ name: 'POST /api/agents/:agentId/runs/trigger', parentSpanId: callerSpanId });
    const call = inTrace().find((x) => x.name === 'n8n webhook')!;
    expect(call).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: server.spanId });
    expect(call.attributes).toMatchObject({ 'ars.runtime.kind': 'workflow', 'http.response.status_code': 200 });
    const completed = inTrace().find((x) => x.name === 'run completed')!;
    expect(completed.parentSpanId).toBe(server.spanId);
    expect(completed.attributes).toMatchObject({ 'ars.run_id': runId, 'ars.run.status': 'completed' });

    // n8n's Webhook node received the call's context: the workflow (and anything it calls) can join the trace.
    const execution = await settledExecution(run.external_run_id);
    const received = nodeOutput(execution, 'Webhook') as { headers?: Record<string, string> } | null;
    expect(received?.headers?.traceparent).toBe(`00-${traceId}-${call.spanId}-01`);
  }, 90_000);
});
