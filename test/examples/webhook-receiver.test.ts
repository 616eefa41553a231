// examples/webhook-receiver (issue 13 item 5): the example receiver takes a real webhook-action delivery from the
// service (spec part 6: `{ run, output }`, signed per decisions.md "Events") and refuses what is not signed with
// its secret, tampered with, stale or replayed.
import type { Server } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { outboxFor } from '../events/outbox-helpers.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { signWebhook } from '../../src/events/standard-webhooks.ts';
import { createReceiver, type WebhookEvent } from '../../examples/webhook-receiver/receiver.ts';

const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
let t: TestApp;
let receiverUrl = '';
let server: Server;
let secret = '';
const events: WebhookEvent[] = [];

/** A webhook action on `completed` for the agent, pointing at the receiver, as an admin creates it. */
async function completedAction(agent: SeededAgent): Promise<string> {
  const res = await t.app.inject({
    method: 'POST', url: `/api/admin/agents/${agent.agent.id}/webhook-actions`, headers: admin, payload: { on_state: 'completed', url: `${receiverUrl}/` },
  });
  expect(res.statusCode).toBe(201);
  return res.json().signing_secret;
}

/** A registered run the task completes through the callback (spec 4.4, 4.8): the event a webhook action sends. */
async function completedRun(agent: SeededAgent, externalRunId: string, output: Record<string, unknown>): Promise<number> {
  const reg = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/register`, headers: agent.ingestAuth, payload: { externalRunId } });
  expect(reg.statusCode).toBe(201);
  const runId: number = reg.json().runId;
  const cb = await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload: { type: 'output', output, outputs: 2, complete: true } });
  expect(cb.statusCode).toBe(200);
  return runId;
}

const post = (body: string, headers: Record<string, string>) =>
  fetch(`${receiverUrl}/`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

beforeAll(async () => {
  // The receiver is on loopback: the SSRF guard lets it through only because the operator listed it.
  t = await createTestApp({ config: { outboundAllowHosts: ['127.0.0.1'] } });
  receiverUrl = await unusedUrl();
});
afterAll(async () => {
  server?.closeAllConnections();
  await new Promise((resolve) => (server ? server.close(resolve) : resolve(undefined)));
  await t.close();
});

describe('examples/webhook-receiver against the service\'s real deliveries (spec part 6)', () => {
  let agent: SeededAgent;
  let runId = 0;

  it('accepts a real delivery of a completed run and hands over { run, output }; the service records it delivered', async () => {
    agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: await unusedUrl() } });
    secret = await completedAction(agent);
    server = createReceiver({ secret, onEvent: (e) => void events.push(e) });
    await new Promise<void>((resolve) => server.listen(Number(new URL(receiverUrl).port), '127.0.0.1', resolve));
    runId = await completedRun(agent, 'receiver-1', { summary: 'three words', outputs: 2 });

    expect(await deliverDueOnce(t.ctx, t.ctx.clock.now())).toMatchObject({ delivered: 1, retry: 0 });

    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      run: { runId, agentId: agent.agent.id, status: 'completed', outputs: 2 },
      output: { summary: 'three words', outputs: 2 },
    });
    const [row] = await outboxFor(t, runId);
    expect(events[0]!.id).toBe(row!.message_id);
    expect(row).toMatchObject({ attempts: 1, last_error: null });
    expect(row!.delivered_at).not.toBeNull();
  });

  it('refuses a delivery signed with another action\'s secret: 401, and the service keeps it for a retry', async () => {
    const stranger = await seedAgent(t, { runtime: { kind: 'task', baseUrl: await unusedUrl() } });
    await completedAction(stranger); // its own secret, which this receiver does not hold
    const strangerRun = await completedRun(stranger, 'receiver-2', { summary: 'not for you' });

    expect(await deliverDueOnce(t.ctx, t.ctx.clock.now())).toMatchObject({ delivered: 0, retry: 1 });

    expect(events.map((e) => e.run.runId)).not.toContain(strangerRun);
    const [row] = await outboxFor(t, strangerRun);
    expect(row).toMatchObject({ attempts: 1, delivered_at: null, last_error: 'http_error: HTTP 401' });
  });

  describe('a body or header changed on the way is refused (401), nothing handed over', () => {
    const body = () => JSON.stringify({ run: { runId: 999, agentId: agent.agent.id, status: 'completed' }, output: { amount: 10 } });
    const signed = (id: string, at = new Date()) => signWebhook({ id, timestamp: at, body: body(), secret });

    it('a tampered body under a valid signature', async () => {
      const res = await post(body().replace('"amount":10', '"amount":1000'), signed('msg_tampered'));
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'no matching signature' });
    });

    it('a timestamp older than five minutes (replay window)', async () => {
      const res = await post(body(), signed('msg_stale', new Date(Date.now() - 6 * 60_000)));
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ error: 'webhook-timestamp outside the tolerance window' });
    });

    it('a changed webhook-id, and a request with no signature at all', async () => {
      const headers = signed('msg_original');
      expect((await post(body(), { ...headers, 'webhook-id': 'msg_other' })).status).toBe(401);
      expect((await post(body(), { 'content-type': 'application/json' })).status).toBe(401);
    });

    it('nothing of the refused requests reached the handler', () => {
      expect(events.map((e) => e.run.runId)).toEqual([runId]);
    });
  });

  it('a redelivery of the same event (same webhook-id) is acknowledged but handled once', async () => {
    const body = JSON.stringify({ run: { runId: 1000, agentId: agent.agent.id, status: 'completed' }, output: {} });
    const headers = signWebhook({ id: 'msg_twice', timestamp: new Date(), body, secret });

    expect(await (await post(body, headers)).json()).toEqual({ received: true });
    expect(await (await post(body, headers)).json()).toEqual({ received: true, duplicate: true });
    expect(events.filter((e) => e.id === 'msg_twice')).toHaveLength(1);
  });
});
