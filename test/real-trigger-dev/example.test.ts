// Issue 36 Deliver 1: examples/trigger-dev's `review-refund` task, as shipped, running on a REAL Trigger.dev (see
// tasks.test.ts): triggered through the service, it resolves its `payments` credential (spec 4.10), reports
// started and waiting on a token tagged for its run (spec 4.8), is resumed through /waitpoint (spec 4.9), calls the
// payment provider with the resolved secret and completes with the reviewer's decision.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createAgent, eventually, NO_REAL_TRIGGER_DEV, setTaskKeys, startServiceOnTriggerDev, tdRun, TD_VERSION,
  type CreatedAgent, type ServiceOnTriggerDev,
} from './real-trigger-dev.ts';

let s: ServiceOnTriggerDev;
let agent: CreatedAgent;
let payments: Server;
const refunds: Array<{ authorization: string | undefined; idempotencyKey: string | undefined; body: unknown }> = [];

describe.skipIf(NO_REAL_TRIGGER_DEV)(`examples/trigger-dev on a real Trigger.dev ${TD_VERSION}`, () => {
  beforeAll(async () => {
    // The payment provider the task calls when the refund is approved.
    payments = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        refunds.push({ authorization: req.headers.authorization, idempotencyKey: req.headers['idempotency-key'] as string | undefined, body: JSON.parse(body) });
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ id: 're_real_1' }));
      });
    });
    await new Promise<void>((resolve) => payments.listen(0, '127.0.0.1', resolve));
    s = await startServiceOnTriggerDev();
    agent = await createAgent(s, 'refunds', 'review-refund', { poll_interval_s: 10 });
    const conn = await s.service.api('POST', `/api/admin/agents/${agent.id}/connections`, { integration_id: 'payments', type: 'api_key', value: 'sk-live-test' });
    expect(conn.status, JSON.stringify(conn.json)).toBe(201);
    // What the example's README has the operator set in the Trigger.dev project's environment.
    setTaskKeys({ 'review-refund': agent.agentKey, PAYMENTS_API_URL: `http://127.0.0.1:${(payments.address() as AddressInfo).port}` });
  }, 240_000);

  afterAll(async () => {
    await s?.service.stop();
    await s?.storage.drop();
    await new Promise<void>((resolve) => payments?.close(() => resolve()));
  });

  it('trigger → credential, started, waiting on a tagged token → /waitpoint → refund issued, completed with the decision', async () => {
    const res = await s.service.api('POST', `/api/agents/${agent.id}/runs/trigger`, { input: { orderId: 'A-100', amount: 42, reason: 'damaged' } }, agent.ingest);
    expect(res.status, JSON.stringify(res.json)).toBe(201);
    const runId = res.json.runId as number;
    const run = async () => (await s.service.api('GET', `/api/admin/runs/${runId}`)).json;
    const waiting = await eventually(run, (r) => r.status === 'waiting' || ['completed', 'failed', 'cancelled'].includes(r.status), 90_000);
    expect(waiting.status, JSON.stringify(waiting)).toBe('waiting');
    expect(waiting.wait).toMatchObject({ description: 'Refund 42 on order A-100 (damaged)?' });
    expect((await tdRun(waiting.external_run_id)).taskIdentifier).toBe('review-refund');

    const resume = await s.service.api('POST', `/api/runs/${runId}/waitpoint`, { payload: { approved: true, reviewer: 'dana' } }, `Bearer ${agent.agentKey}`);
    expect(resume.status, JSON.stringify(resume.json)).toBe(200);
    const done = await eventually(run, (r) => ['completed', 'failed', 'cancelled'].includes(r.status), 90_000);
    const result = { orderId: 'A-100', amount: 42, approved: true, reviewer: 'dana', refundId: 're_real_1', outputs: 1 };
    expect(done).toMatchObject({ status: 'completed', output_data: result, outputs: 1 });
    expect(refunds).toEqual([{ authorization: 'Bearer sk-live-test', idempotencyKey: 'refund-A-100', body: { orderId: 'A-100', amount: 42 } }]);
  }, 240_000);
});
