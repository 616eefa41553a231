// Issue 14: "outbound deliveries per run with a redeliver call" — GET /runs/{runId}/deliveries and
// POST /runs/{runId}/deliveries/{deliveryId}/redeliver (202), sent again by the outbox worker with the same webhook-id.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { claimDueDeliveries } from '../../src/events/outbox-repo.ts';
import { outboxFor, Receiver, runTo, seedWebhookAction } from '../events/outbox-helpers.ts';
import { auditActions, call, ok } from './admin-helpers.ts';

const clock = new ManualClock(new Date('2026-04-01T08:00:00Z'));
let t: TestApp;
let receiver: Receiver;
beforeAll(async () => {
  t = await createTestApp({ clock, config: { outboundAllowHosts: ['127.0.0.1'] } });
  receiver = await new Receiver().start();
});
afterAll(async () => {
  await t.close();
  await receiver.stop();
});

const deliver = () => deliverDueOnce(t.ctx, clock.now());
const at = (path: string) => receiver.received.filter((r) => r.path === `/${path}`);

/** A completed run with two webhook actions: one the receiver takes, one the SSRF guard refuses (given up). */
async function completedRun(path: string) {
  const agent = await seedAgent(t);
  const good = await seedWebhookAction(t, agent.agent.id, 'completed', `${receiver.url}/${path}`);
  const blocked = await seedWebhookAction(t, agent.agent.id, 'completed', 'http://10.0.0.1/hook');
  const runId = await runTo(t, agent.agent.id, 'completed', { outputData: { answer: 42 }, outputs: 1 });
  await deliver();
  const rows = await outboxFor(t, runId);
  return { agent, runId, good, blocked, rows };
}

describe('GET /runs/{runId}/deliveries', () => {
  it('issue 14: each delivery with its bookkeeping — never the URL, the signing secret or the run snapshot', async () => {
    const { runId, good, blocked } = await completedRun('list');
    const body = await ok(t, 200, 'GET', `/runs/${runId}/deliveries`);
    expect(body.data).toHaveLength(2);
    const byAction = Object.fromEntries(body.data.map((d: { webhook_action_id: string }) => [d.webhook_action_id, d]));
    expect(byAction[good.id]).toEqual({
      id: expect.any(Number),
      webhook_action_id: good.id,
      event: 'completed',
      attempts: 1,
      next_attempt_at: expect.any(String),
      delivered_at: clock.now().toISOString(),
      failed_at: null,
      last_error: null,
      created_at: expect.any(String),
    });
    expect(byAction[blocked.id]).toMatchObject({ attempts: 1, delivered_at: null, failed_at: clock.now().toISOString(), last_error: expect.any(String) });
    const text = JSON.stringify(body);
    for (const hidden of [receiver.url, '10.0.0.1', good.secret, blocked.secret, '"answer"']) expect(text).not.toContain(hidden);
  });

  it('admin-api.md: unknown run 404, a run without deliveries an empty list, no token 401', async () => {
    expect((await call(t, 'GET', '/runs/99999999/deliveries')).statusCode).toBe(404);
    const agent = await seedAgent(t);
    const runId = await runTo(t, agent.agent.id, 'failed', { error: 'x' });
    expect(await ok(t, 200, 'GET', `/runs/${runId}/deliveries`)).toEqual({ data: [] });
    expect((await call(t, 'GET', `/runs/${runId}/deliveries`, undefined, {})).statusCode).toBe(401);
  });
});

describe('POST /runs/{runId}/deliveries/{deliveryId}/redeliver', () => {
  it('issue 14: a delivered event is queued again (202) and the worker sends it again, same webhook-id; audited', async () => {
    const { agent, runId, good, rows } = await completedRun('again');
    const row = rows.find((r) => r.delivered_at !== null)!;
    expect(at('again')).toHaveLength(1);
    clock.advance(60_000);

    const res = await call(t, 'POST', `/runs/${runId}/deliveries/${row.id}/redeliver`);
    expect(res.statusCode).toBe(202);
    // Attempts are kept: the count is the delivery's history, and the retry schedule goes on from it.
    expect(res.json()).toMatchObject({ id: row.id, webhook_action_id: good.id, attempts: 1, delivered_at: null, failed_at: null, next_attempt_at: clock.now().toISOString() });

    expect(await deliver()).toMatchObject({ delivered: 1 });
    const [first, second] = at('again');
    expect(second).toBeDefined();
    expect(second!.headers['webhook-id']).toBe(first!.headers['webhook-id']);
    expect(second!.rawBody).toBe(first!.rawBody);
    expect((await outboxFor(t, runId)).find((r) => r.id === row.id)).toMatchObject({ attempts: 2, delivered_at: clock.now() });

    const audit = (await auditActions(t, agent.agent.id)).filter((e) => e.action === 'delivery.redelivered');
    expect(audit).toEqual([expect.objectContaining({ run_id: runId, actor_user_id: null, details: { delivery_id: row.id, event: 'completed', webhook_action_id: good.id } })]);
  });

  it('issue 14: a given-up delivery is pending again (failed_at cleared) until the worker tries it once more', async () => {
    const { runId, blocked, rows } = await completedRun('given-up');
    const row = rows.find((r) => r.failed_at !== null)!;
    const queued = await ok(t, 202, 'POST', `/runs/${runId}/deliveries/${row.id}/redeliver`);
    expect(queued).toMatchObject({ webhook_action_id: blocked.id, failed_at: null, delivered_at: null, last_error: row.last_error });
    expect(await deliver()).toMatchObject({ given_up: 1 }); // the guard still refuses the address: given up again
    expect((await outboxFor(t, runId)).find((r) => r.id === row.id)).toMatchObject({ attempts: 2, failed_at: clock.now() });
  });

  it('decisions.md: not while an attempt is in flight (409); unknown run or delivery, or one of another run, 404', async () => {
    const agent = await seedAgent(t);
    await seedWebhookAction(t, agent.agent.id, 'completed', `${receiver.url}/in-flight`);
    const runId = await runTo(t, agent.agent.id, 'completed');
    const [row] = await outboxFor(t, runId);
    // A worker holds the row under its lease (as deliverDueOnce does while it posts).
    await claimDueDeliveries(t.db, clock.now(), new Date(clock.now().getTime() + 60_000), 100);
    const res = await call(t, 'POST', `/runs/${runId}/deliveries/${row!.id}/redeliver`);
    expect(res.statusCode).toBe(409);
    expect(res.json().error).toContain('being attempted');

    const other = await runTo(t, agent.agent.id, 'failed', { error: 'x' });
    expect((await call(t, 'POST', `/runs/${other}/deliveries/${row!.id}/redeliver`)).statusCode).toBe(404);
    expect((await call(t, 'POST', `/runs/99999999/deliveries/${row!.id}/redeliver`)).statusCode).toBe(404);
    expect((await call(t, 'POST', `/runs/${runId}/deliveries/abc/redeliver`)).statusCode).toBe(404);
    expect((await call(t, 'POST', `/runs/${runId}/deliveries/${row!.id}/redeliver`, undefined, {})).statusCode).toBe(401);
  });
});
