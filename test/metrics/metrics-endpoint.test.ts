// Issue 11 item 5 "Operations", decisions.md "Metrics": GET /metrics scraped through the app before and after real
// traffic (a trigger, callbacks, a poll, webhook-action deliveries, 429s), whose counters must move by exactly what
// the traffic caused; label values that never carry a run, agent, tenant or URL; ARS_METRICS_TOKEN.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { readRun, seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { Receiver, seedWebhookAction } from '../events/outbox-helpers.ts';
import { seedRun } from '../runtime-api/support.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { pollDueRuns } from '../../src/background/poller.ts';
import { deliverDueOnce } from '../../src/events/outbox-worker.ts';
import { LIMITS } from '../../src/rate-limits/rate-limiter.ts';
import { measure, parseExposition, scrape } from './exposition.ts';

// Ids no figure in the exposition could equal by chance, so "the id appears nowhere" means something.
const FIRST_AGENT_ID = 876_543_210;
const FIRST_RUN_ID = 987_654_321;

const TRIGGER_ROUTE = '/api/agents/:agentId/runs/trigger';
const CALLBACK_ROUTE = '/api/runs/:runId/callback';

let t: TestApp;
const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const fake = new TriggerDevFake();
const receiver = new Receiver();
let agent: SeededAgent;
let runId: number;
let externalRunId: string;

beforeAll(async () => {
  await Promise.all([fake.start(), receiver.start()]);
  fake.registerTask('my-target');
  t = await createTestApp({ clock, config: { outboundAllowHosts: ['127.0.0.1'] } });
  await t.db.query(`ALTER TABLE agents ALTER COLUMN id RESTART WITH ${FIRST_AGENT_ID}`);
  await t.db.query(`ALTER TABLE runs ALTER COLUMN id RESTART WITH ${FIRST_RUN_ID}`);
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, poll_interval_s: 60 });
  // Two subscribers to `completed`: one that answers 500 once (a retry, then delivered), one the SSRF guard refuses (given up).
  await seedWebhookAction(t, agent.agent.id, 'completed', `${receiver.url}/hook`);
  await seedWebhookAction(t, agent.agent.id, 'completed', 'http://10.0.0.1/hook');
  receiver.script.push(500);
});
afterAll(async () => {
  await t.close();
  await Promise.all([fake.stop(), receiver.stop()]);
});

const callback = (id: number, body: object) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${id}/callback`, headers: agent.agentAuth, payload: body });

describe('issue 11 item 5: /metrics figures move by exactly what the traffic caused', () => {
  it('a trigger: one run entered queued (path start), one 2xx on the trigger route, one Trigger.dev trigger call', async () => {
    const moved = await measure(t.app, async () => {
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: {} });
      expect(res.statusCode, res.body).toBe(201);
      runId = res.json().runId as number;
    });
    externalRunId = (await readRun(t, runId))!.external_run_id as string;
    expect(moved('ars_run_transitions_total', { status: 'queued', path: 'start' })).toBe(1);
    expect(moved('ars_run_transitions_total')).toBe(1);
    expect(moved('ars_http_request_duration_seconds_count', { method: 'POST', route: TRIGGER_ROUTE, status_class: '2xx' })).toBe(1);
    expect(moved('ars_runtime_call_duration_seconds_count', { runtime: 'task', operation: 'trigger', outcome: 'ok' })).toBe(1);
    expect(moved('ars_runtime_call_duration_seconds_count')).toBe(1);
  });

  it('spec 4.8: a started callback: one run entered running (path callback), one 2xx on the callback route', async () => {
    const moved = await measure(t.app, async () => {
      expect((await callback(runId, { type: 'started' })).statusCode).toBe(200);
    });
    expect(moved('ars_run_transitions_total', { status: 'running', path: 'callback' })).toBe(1);
    expect(moved('ars_run_transitions_total')).toBe(1);
    expect(moved('ars_http_request_duration_seconds_count', { route: CALLBACK_ROUTE, status_class: '2xx' })).toBe(1);
  });

  it('spec part 3 "poll of runtime": one completion (path poll), one status read, its lag, and the outbox backlog it queued', async () => {
    fake.completeRun(externalRunId, { answer: 42 });
    clock.advance(90_000); // next_poll_at was trigger time + 60 s: claimed 30 s late
    const moved = await measure(t.app, async () => {
      expect((await pollDueRuns(t.ctx)).polled).toBe(1);
    });
    expect(moved('ars_run_transitions_total', { status: 'completed', path: 'poll' })).toBe(1);
    expect(moved('ars_run_transitions_total')).toBe(1);
    expect(moved('ars_runtime_call_duration_seconds_count', { runtime: 'task', operation: 'run_read', outcome: 'ok' })).toBe(1);
    expect(moved('ars_poll_lag_seconds_count')).toBe(1);
    expect(moved('ars_poll_lag_seconds_sum')).toBe(30);
    expect((await scrape(t.app)).value('ars_outbox_backlog')).toBe(2);
  });

  it('spec part 6: webhook-action attempts by outcome (retry, given_up, then delivered) and the backlog draining', async () => {
    let moved = await measure(t.app, async () => {
      await deliverDueOnce(t.ctx, clock.now());
    });
    expect(moved('ars_outbox_delivery_attempts_total', { outcome: 'retry' })).toBe(1);
    expect(moved('ars_outbox_delivery_attempts_total', { outcome: 'given_up' })).toBe(1);
    expect(moved('ars_outbox_delivery_attempts_total')).toBe(2);
    expect((await scrape(t.app)).value('ars_outbox_backlog')).toBe(1);

    clock.advance(60_000); // past the first retry delay (10 s ± 20 %)
    moved = await measure(t.app, async () => {
      await deliverDueOnce(t.ctx, clock.now());
    });
    expect(moved('ars_outbox_delivery_attempts_total', { outcome: 'delivered' })).toBe(1);
    expect(moved('ars_outbox_delivery_attempts_total')).toBe(1);
    expect((await scrape(t.app)).value('ars_outbox_backlog')).toBe(0);
  });

  it('spec 8.1: 429s are counted once each, whether the run write or the memory of this instance refused them', async () => {
    clock.advance(60_000); // a fresh minute for the agent's callback bucket
    const run = await seedRun(t, agent.agent.id, 'running');
    const moved = await measure(t.app, async () => {
      for (let i = 0; i < LIMITS.callbackAndWaitpoint; i++) expect((await callback(run.id, { type: 'output', output: { step: i } })).statusCode).toBe(200);
      expect((await callback(run.id, { type: 'output', output: {} })).statusCode).toBe(429); // counted in the write
      expect((await callback(run.id, { type: 'output', output: {} })).statusCode).toBe(429); // known in memory
    });
    expect(moved('ars_rate_limited_total', { route: CALLBACK_ROUTE })).toBe(2);
    expect(moved('ars_rate_limited_total')).toBe(2);
    expect(moved('ars_http_request_duration_seconds_count', { route: CALLBACK_ROUTE, status_class: '4xx' })).toBe(2);
    // Intermediate output changes no status that is counted (decisions.md "Metrics").
    expect(moved('ars_run_transitions_total')).toBe(0);
  });

  it('held waits and calls are read at scrape time from this instance', async () => {
    const expire = async (): Promise<void> => {};
    t.ctx.waits.add(1, expire);
    const held = t.ctx.heldCalls.hold(2, 60_000);
    try {
      const during = await scrape(t.app);
      expect(during.find('ars_held_sync_waits')[0]?.value).toBe(1);
      expect(during.find('ars_held_workflow_calls')[0]?.value).toBe(1);
    } finally {
      t.ctx.waits.remove(1, expire);
      held.release();
    }
    const after = await scrape(t.app);
    expect(after.find('ars_held_sync_waits')[0]?.value).toBe(0);
    expect(after.find('ars_held_workflow_calls')[0]?.value).toBe(0);
  });

  it('the database pool is reported on PostgreSQL only; process metrics are in this registry', async () => {
    const s = await scrape(t.app);
    if (onPostgres) {
      expect(s.find('ars_db_pool_connections')[0]?.value).toBeGreaterThan(0);
      expect(s.find('ars_db_pool_idle_connections')).toHaveLength(1);
      expect(s.find('ars_db_pool_waiting_queries')).toHaveLength(1);
    } else {
      expect(s.text).not.toContain('ars_db_pool');
    }
    expect(s.find('process_cpu_user_seconds_total')).toHaveLength(1);
    expect(s.find('nodejs_heap_size_used_bytes')).toHaveLength(1);
  });

  it('label values are bounded: no run, agent, tenant, runtime URL or raw path appears in the exposition', async () => {
    const unknown = await t.app.inject({ method: 'GET', url: `/api/agents/${agent.agent.id}/nowhere/${runId}?token=secret-ish` });
    expect(unknown.statusCode).toBe(404);
    const s = await scrape(t.app);
    expect(s.value('ars_http_request_duration_seconds_count', { route: 'unmatched', status_class: '4xx' })).toBeGreaterThanOrEqual(1);
    for (const secretish of [String(runId), String(agent.agent.id), agent.orgId, externalRunId, new URL(fake.url).host, 'my-target', 'nowhere', 'secret-ish']) {
      expect(s.text).not.toContain(secretish);
    }
    // Every route label is a pattern this app serves (or "unmatched"), never a request's URL.
    const routes = new Set(s.find('ars_http_request_duration_seconds_count').map((x) => `${x.labels.method} ${x.labels.route}`));
    for (const pair of routes) {
      const [method, url] = pair.split(' ') as [string, string];
      if (url !== 'unmatched') expect(t.app.hasRoute({ method: method as 'GET', url }), pair).toBe(true);
    }
  });

  it('spec 8.1 fails open: a request let through because the limiter store failed is counted', async () => {
    await t.db.query('DROP TABLE rate_limit_buckets'); // the store breaks (last test of the file)
    const moved = await measure(t.app, async () => {
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: {} });
      expect(res.statusCode, res.body).toBe(201);
    });
    expect(moved('ars_rate_limiter_fail_open_total')).toBe(1);
    expect(t.logs.some((line) => line.includes('rate-limit store failed; request let through'))).toBe(true);
  });
});

describe('decisions.md "Metrics": ARS_METRICS_TOKEN', () => {
  const token = 'metrics-token-0123456789abcdef0123456789';
  let guarded: TestApp;
  beforeAll(async () => {
    guarded = await createTestApp({ config: { metricsToken: token } });
  });
  afterAll(() => guarded.close());

  it('when set, /metrics answers only its bearer token (401 with the error body otherwise)', async () => {
    for (const authorization of [undefined, 'Bearer wrong-token', `Bearer ${token}x`, `Basic ${token}`, token]) {
      const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: authorization ? { authorization } : {} });
      expect(res.statusCode, String(authorization)).toBe(401);
      expect(res.json()).toEqual({ error: expect.any(String), code: 'unauthorized', requestId: res.headers['x-request-id'] });
    }
    const ok = await scrape(guarded.app, { authorization: `Bearer ${token}` });
    expect(ok.find('ars_outbox_backlog')).toHaveLength(1);
  });

  it('when unset, /metrics is open; each instance has its own registry (the guarded one never saw the other\'s traffic)', async () => {
    const open = await t.app.inject({ method: 'GET', url: '/metrics' });
    expect(open.statusCode).toBe(200);
    const res = await guarded.app.inject({ method: 'GET', url: '/metrics', headers: { authorization: `Bearer ${token}` } });
    expect(parseExposition(res.body).value('ars_run_transitions_total')).toBe(0);
  });
});
