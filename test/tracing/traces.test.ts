// Issue 39 item 2: traces. The service runs as a process (its tracer provider is process-wide) exporting OTLP to a
// receiver in this process; Trigger.dev is the fake, a webhook-action receiver is a local server. One trace runs
// from the caller's /trigger through the runtime call, back through the task's callback, and out to the webhook
// delivery. A second service, exporting nothing, passes the caller's traceparent on unchanged.
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { createPlatformAgent, eventually, startServiceOnRuntime, type CreatedAgent, type ServiceOnRuntime } from '../faults/service-process.ts';
import { SPAN_KIND, startOtlpReceiver, type OtlpReceiver, type ReceivedSpan } from '../helpers/otlp-receiver.ts';
import { Receiver } from '../events/outbox-helpers.ts';

const trigger = new TriggerDevFake();
const hooks = new Receiver();
let receiver: OtlpReceiver;

const INPUT_VALUE = 'a-value-only-the-run-input-holds';
const hex = (bytes: number) => randomBytes(bytes).toString('hex');
/** A caller's span: the trace and span ids it sends in `traceparent`. */
const callerSpan = () => {
  const traceId = hex(16);
  const spanId = hex(8);
  return { traceId, spanId, traceparent: `00-${traceId}-${spanId}-01` };
};

async function startOn(env: Record<string, string>): Promise<{ s: ServiceOnRuntime; agent: CreatedAgent; hookPath: string }> {
  const s = await startServiceOnRuntime(
    { ARS_OUTBOUND_ALLOW_HOSTS: '127.0.0.1', ...env },
    { name: 'trigger', kind: 'task', base_url: trigger.url, api_key: trigger.secretKey },
  );
  const agent = await createPlatformAgent(s.service, s, 'traced', 'my-task');
  const hookPath = `/hook-${hex(4)}`; // each service's deliveries apart (both number their runs from 1)
  const action = await s.service.api('POST', `/api/admin/agents/${agent.id}/webhook-actions`, { on_state: 'completed', url: `${hooks.url}${hookPath}` });
  expect(action.status).toBe(201);
  return { s, agent, hookPath };
}

async function triggerWith(s: ServiceOnRuntime, agent: CreatedAgent, traceparent: string): Promise<number> {
  const res = await fetch(`${s.service.url}/api/agents/${agent.id}/runs/trigger`, {
    method: 'POST',
    headers: { authorization: agent.ingest, 'content-type': 'application/json', traceparent },
    body: JSON.stringify({ input: { topic: INPUT_VALUE } }),
  });
  if (res.status !== 201) throw new Error(`/trigger answered ${res.status}: ${await res.text()}\n${s.service.logs.slice(-5).join('\n')}`);
  return ((await res.json()) as { runId: number }).runId;
}

async function complete(s: ServiceOnRuntime, agent: CreatedAgent, runId: number): Promise<void> {
  const res = await fetch(`${s.service.url}/api/runs/${runId}/callback`, {
    method: 'POST',
    headers: { authorization: `Bearer ${agent.agentKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ type: 'output', complete: true, output: { done: true } }),
  });
  expect(res.status).toBe(200);
}

/** The newest trigger of run `runId` the fake received (both services number their runs from 1). */
const sentFor = (runId: number) => trigger.triggers().reverse().find((r) => (r.body as { payload?: { runId?: number } }).payload?.runId === runId);
/** The service's request line for run `runId`'s /trigger (ARS_REQUEST_LOG, one JSON line per request). */
const triggerLine = (s: ServiceOnRuntime, runId: number) =>
  eventually(
    async () => s.service.logs.map(parsed).find((l) => l?.route === '/api/agents/:agentId/runs/trigger' && l.runId === runId),
    (line) => line !== undefined, // written once the answer has gone: maybe just after the caller read it
    10_000,
  );
const parsed = (line: string): Record<string, unknown> | null => {
  try {
    return JSON.parse(line) as Record<string, unknown>;
  } catch {
    return null; // a line cut between two reads of the pipe
  }
};
const deliveryFor = (hookPath: string, runId: number) =>
  hooks.received.find((r) => r.path === hookPath && (r.body.run as { runId?: number } | undefined)?.runId === runId);

beforeAll(async () => {
  receiver = await startOtlpReceiver();
  await trigger.start();
  trigger.registerTask('my-task');
  await hooks.start();
});

afterAll(async () => {
  await trigger.stop();
  await hooks.stop();
  await receiver.close();
});

describe('traces exported over OTLP (issue 39 item 2)', () => {
  let s: ServiceOnRuntime;
  let agent: CreatedAgent;
  let hookPath: string;
  beforeAll(async () => {
    ({ s, agent, hookPath } = await startOn({ OTEL_EXPORTER_OTLP_ENDPOINT: receiver.endpoint, OTEL_BSP_SCHEDULE_DELAY: '100', OTEL_SERVICE_NAME: 'ars-under-test' }));
  }, 180_000);
  afterAll(async () => {
    await s?.service.stop();
    await s?.storage.drop();
  });

  it('one trace from the caller\'s /trigger to the runtime call, back through the callback and out to the webhook delivery', async () => {
    const caller = callerSpan();
    const runId = await triggerWith(s, agent, caller.traceparent);
    const inTrace = (spans: ReceivedSpan[]) => spans.filter((x) => x.traceId === caller.traceId);

    // The request: a SERVER span, the caller's span its parent, named by its route (never by a URL with a token).
    const spans = await receiver.waitFor((all) => inTrace(all).some((x) => x.kind === SPAN_KIND.server) && inTrace(all).some((x) => x.name === 'Trigger.dev trigger'));
    const server = inTrace(spans).find((x) => x.kind === SPAN_KIND.server)!;
    expect(server).toMatchObject({ name: 'POST /api/agents/:agentId/runs/trigger', parentSpanId: caller.spanId, service: 'ars-under-test' });
    expect(server.attributes).toMatchObject({ 'http.request.method': 'POST', 'http.response.status_code': 201, 'ars.run_id': runId });

    // The runtime call: a CLIENT span under the request, whose context is what Trigger.dev received.
    const call = inTrace(spans).find((x) => x.name === 'Trigger.dev trigger')!;
    expect(call).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: server.spanId });
    expect(call.attributes).toMatchObject({ 'ars.runtime.kind': 'task', 'ars.runtime.operation': 'trigger', 'http.response.status_code': 200 });
    const sent = sentFor(runId);
    expect(sent?.headers.traceparent).toBe(`00-${caller.traceId}-${call.spanId}-01`);
    // Its log line leads to the trace (OpenTelemetry's log correlation fields).
    expect(await triggerLine(s, runId)).toMatchObject({ trace_id: caller.traceId, span_id: server.spanId });

    // The database statements of the request are its children (their text, never a value).
    const statements = inTrace(spans).filter((x) => x.attributes['db.system.name'] === 'postgresql');
    expect(statements.map((x) => x.name)).toContain('WITH');
    expect(statements.filter((x) => JSON.stringify(x).includes(INPUT_VALUE))).toEqual([]); // parameters are never in a span

    // Back: the task's callback carries no context of ours; its status change is recorded in the run's trace, under
    // the request that started the run, linked to the callback request's own trace.
    await complete(s, agent, runId);
    const after = await receiver.waitFor((all) => inTrace(all).some((x) => x.name === 'run completed'));
    const back = inTrace(after).find((x) => x.name === 'run completed')!;
    expect(back).toMatchObject({ parentSpanId: server.spanId });
    expect(back.attributes).toMatchObject({ 'ars.run_id': runId, 'ars.run.via': 'callback', 'ars.run.status': 'completed' });
    const callbackServer = after.find((x) => x.kind === SPAN_KIND.server && x.name === 'POST /api/runs/:runId/callback' && x.spanId === back.links[0]?.spanId);
    expect(callbackServer).toBeDefined();
    expect(callbackServer!.traceId).not.toBe(caller.traceId);

    // Out: the webhook action's delivery is a CLIENT span of the same trace, and the receiver gets its context.
    const delivered = await eventually(async () => deliveryFor(hookPath, runId), (d) => d !== undefined, 20_000);
    const withDelivery = await receiver.waitFor((all) => inTrace(all).some((x) => x.name === 'webhook delivery'));
    const delivery = inTrace(withDelivery).find((x) => x.name === 'webhook delivery')!;
    expect(delivery).toMatchObject({ kind: SPAN_KIND.client, parentSpanId: server.spanId });
    expect(delivered!.headers.traceparent).toBe(`00-${caller.traceId}-${delivery.spanId}-01`);
  }, 60_000);

  it('a request without a traceparent starts a trace of its own, and a malformed one is ignored', async () => {
    const before = receiver.spans.length;
    const res = await fetch(`${s.service.url}/api/agents/${agent.id}/runs/trigger`, {
      method: 'POST',
      headers: { authorization: agent.ingest, 'content-type': 'application/json', traceparent: '00-not-a-trace-01' },
      body: JSON.stringify({ input: {} }),
    });
    expect(res.status).toBe(201);
    const { runId } = (await res.json()) as { runId: number };
    const spans = await receiver.waitFor((all) => all.slice(before).some((x) => x.kind === SPAN_KIND.server && x.attributes['ars.run_id'] === runId));
    const server = spans.slice(before).find((x) => x.kind === SPAN_KIND.server && x.attributes['ars.run_id'] === runId)!;
    expect(server.parentSpanId).toBe('');
    expect(server.traceId).toMatch(/^[0-9a-f]{32}$/);
  }, 60_000);

  it('a webhook URL\'s token never reaches a span: the route names it, the path is masked', async () => {
    const before = receiver.spans.length;
    const res = await fetch(`${s.service.url}/api/agents/${agent.id}/runs/webhook/not-the-token-${hex(8)}`, { method: 'POST', body: '{}', headers: { 'content-type': 'application/json' } });
    expect(res.status).toBe(401);
    const spans = await receiver.waitFor((all) => all.slice(before).some((x) => x.kind === SPAN_KIND.server && String(x.attributes['http.route']).includes('webhook')));
    const server = spans.slice(before).find((x) => x.kind === SPAN_KIND.server && String(x.attributes['http.route']).includes('webhook'))!;
    expect(JSON.stringify(server)).not.toMatch(/not-the-token/);
    expect(server.attributes['url.path']).toMatch(/\[REDACTED\]/);
  }, 60_000);
});

describe('no OTLP endpoint: the caller\'s context is passed on as it is (issue 39 item 2)', () => {
  let s: ServiceOnRuntime;
  let agent: CreatedAgent;
  let hookPath: string;
  beforeAll(async () => {
    ({ s, agent, hookPath } = await startOn({}));
  }, 180_000);
  afterAll(async () => {
    await s?.service.stop();
    await s?.storage.drop();
  });

  it('the runtime call and the webhook delivery carry the caller\'s traceparent; nothing is exported', async () => {
    const before = receiver.spans.length;
    const caller = callerSpan();
    const runId = await triggerWith(s, agent, caller.traceparent);
    const sent = sentFor(runId);
    expect(sent?.headers.traceparent).toBe(caller.traceparent);
    expect(await triggerLine(s, runId)).toMatchObject({ trace_id: caller.traceId, span_id: caller.spanId });
    await complete(s, agent, runId);
    const delivered = await eventually(async () => deliveryFor(hookPath, runId), (d) => d !== undefined, 20_000);
    expect(delivered!.headers.traceparent).toBe(caller.traceparent);
    expect(receiver.spans.length).toBe(before);
  }, 60_000);

  it('without a traceparent, no trace header leaves the service', async () => {
    const res = await fetch(`${s.service.url}/api/agents/${agent.id}/runs/trigger`, {
      method: 'POST',
      headers: { authorization: agent.ingest, 'content-type': 'application/json' },
      body: JSON.stringify({ input: {} }),
    });
    const { runId } = (await res.json()) as { runId: number };
    const sent = sentFor(runId);
    expect(sent).toBeDefined();
    expect(sent!.headers.traceparent).toBeUndefined();
    // Its line carries no trace, although the connection served a traced request before.
    expect(await triggerLine(s, runId)).not.toHaveProperty('trace_id');
  }, 60_000);
});

describe('a collector that cannot be reached (issue 39 item 2)', () => {
  it('requests still answer (201), and the drain is not held: SIGTERM exits 0 once the last spans are given up', async () => {
    const s = await startServiceOnRuntime(
      { OTEL_EXPORTER_OTLP_ENDPOINT: await unusedUrl(), OTEL_BSP_SCHEDULE_DELAY: '100' },
      { name: 'trigger', kind: 'task', base_url: trigger.url, api_key: trigger.secretKey },
    );
    try {
      const agent = await createPlatformAgent(s.service, s, 'traced, nowhere to send', 'my-task');
      await triggerWith(s, agent, callerSpan().traceparent);
      const { code } = await s.service.sigterm();
      expect(code).toBe(0);
      expect(s.service.logs.some((l) => l.includes('"msg":"stopped"'))).toBe(true);
    } finally {
      await s.service.stop();
      await s.storage.drop();
    }
  }, 120_000);
});
