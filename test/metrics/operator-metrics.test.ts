// Issue 39 item 3: metrics an on-call can alert on — runs in flight by status, run duration and queue wait, the
// outbox backlog's age, whether the database answers, build info, pool gauges that do not count their own scrape —
// and docs/prometheus-alerts.yml, whose every rule names only metrics a live instance exports.
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { seedWebhookAction } from '../events/outbox-helpers.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { measure, scrape } from './exposition.ts';

const RULES = readFileSync(path.resolve(import.meta.dirname, '../../docs/prometheus-alerts.yml'), 'utf8');

let t: TestApp;
const clock = new ManualClock(new Date('2026-05-01T10:00:00Z'));
const fake = new TriggerDevFake();
let agent: SeededAgent;

beforeAll(async () => {
  await fake.start();
  fake.registerTask('my-target');
  t = await createTestApp({ clock });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: fake.url, apiKey: fake.secretKey }, poll_interval_s: 60 });
});
afterAll(async () => {
  await t.close();
  await fake.stop();
});

const trigger = async (): Promise<number> => {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: {} });
  expect(res.statusCode, res.body).toBe(201);
  return res.json<{ runId: number }>().runId;
};
const callback = (runId: number, body: object) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload: body });

describe('issue 39 item 3: metrics an on-call can use', () => {
  it('runs in flight by status, read from the database at scrape', async () => {
    const before = await scrape(t.app);
    const queued = before.value('ars_runs_active', { status: 'queued' }) ?? 0;
    const running = before.value('ars_runs_active', { status: 'running' }) ?? 0;
    const first = await trigger();
    await trigger();
    expect((await callback(first, { type: 'started' })).statusCode).toBe(200);
    const after = await scrape(t.app);
    expect(after.value('ars_runs_active', { status: 'queued' })).toBe(queued + 1);
    expect(after.value('ars_runs_active', { status: 'running' })).toBe(running + 1);
    expect(after.value('ars_database_up')).toBe(1);
  });

  it('a run that ends is observed once: its duration by terminal status, and how long it was queued', async () => {
    const runId = await trigger();
    clock.advance(3_000); // queued for 3 s
    expect((await callback(runId, { type: 'started' })).statusCode).toBe(200);
    clock.advance(40_000); // then ran for 40 s
    const moved = await measure(t.app, async () => {
      expect((await callback(runId, { type: 'output', output: { ok: true }, complete: true })).statusCode).toBe(200);
    });
    expect(moved('ars_run_duration_seconds_count', { status: 'completed' })).toBe(1);
    expect(moved('ars_run_duration_seconds_sum', { status: 'completed' })).toBeCloseTo(40, 0);
    expect(moved('ars_run_queue_wait_seconds_count')).toBe(1);
    expect(moved('ars_run_queue_wait_seconds_sum')).toBeCloseTo(3, 0);
    // A repeated terminal callback is a no-op: nothing more is observed.
    const again = await measure(t.app, async () => void (await callback(runId, { type: 'output', output: {}, complete: true })));
    expect(again('ars_run_duration_seconds_count', { status: 'completed' })).toBe(0);
  });

  it('the outbox backlog and the age of its oldest delivery', async () => {
    await seedWebhookAction(t, agent.agent.id, 'failed', 'http://10.0.0.1/never-delivered');
    const runId = await trigger();
    expect((await callback(runId, { type: 'output', failed: true, error: { message: 'boom' } })).statusCode).toBe(200);
    const now = await scrape(t.app);
    expect(now.value('ars_outbox_backlog')).toBeGreaterThanOrEqual(1);
    // The delivery was queued at the database's time; the age is read against the service's clock, moved on.
    clock.set(new Date(Date.now() + 600_000));
    expect((await scrape(t.app)).value('ars_outbox_oldest_pending_age_seconds')).toBeGreaterThan(590);
  });

  it('build info names the version and the Node that runs it', async () => {
    const s = await scrape(t.app);
    const [info] = s.find('ars_build_info');
    const pkg = JSON.parse(readFileSync(path.resolve(import.meta.dirname, '../../package.json'), 'utf8')) as { version: string };
    expect(info).toMatchObject({ value: 1, labels: { version: pkg.version, node_version: process.version } });
  });

  it('a database that does not answer: the counts are NaN (never a reassuring 0) and ars_database_up is 0', async () => {
    const broken = vi.spyOn(t.ctx.db, 'query').mockRejectedValue(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
    try {
      const s = await scrape(t.app);
      expect(s.value('ars_database_up')).toBe(0);
      expect(s.value('ars_runs_active', { status: 'queued' })).toBeNaN();
      expect(s.value('ars_outbox_backlog')).toBeNaN();
    } finally {
      broken.mockRestore();
    }
  });

  it.runIf(onPostgres)('an idle instance\'s pool reports no waiting query: the scrape\'s own reads are not counted', async () => {
    const idle = await createTestApp();
    try {
      for (let i = 0; i < 3; i++) expect((await scrape(idle.app)).value('ars_db_pool_waiting_queries')).toBe(0);
    } finally {
      await idle.close();
    }
  });
});

describe('issue 39 item 3: docs/prometheus-alerts.yml', () => {
  const alerts = RULES.split(/\n\s+- alert: /).slice(1);

  it('covers the on-call\'s questions: runs failing, runs stuck, outbox backlog, limiter failing open, database unavailable', () => {
    const names = alerts.map((a) => a.split('\n')[0]!.trim());
    expect(names).toEqual(expect.arrayContaining(['ArsRunsFailing', 'ArsRunsTimingOut', 'ArsRunsPilingUp', 'ArsOutboxBacklog', 'ArsRateLimiterFailingOpen', 'ArsDatabaseUnavailable']));
    for (const alert of alerts) {
      expect(alert, alert.split('\n')[0]).toMatch(/\n\s+expr: \S.*\n\s+for: \d+[smh]\n\s+labels:\n\s+severity: (warning|critical)\n\s+annotations:\n\s+summary: \S/);
    }
  });

  it('every metric a rule names is one a live instance exports', async () => {
    const exported = new Set([...(await scrape(t.app)).text.matchAll(/^# TYPE (\S+) (\w+)$/gm)].map((m) => m[1]!));
    const named = new Set(alerts.flatMap((a) => [...a.matchAll(/\bars_[a-z0-9_]+/g)].map((m) => m[0].replace(/_(bucket|count|sum)$/, ''))));
    expect(named.size).toBeGreaterThan(5);
    expect([...named].filter((name) => !exported.has(name))).toEqual([]);
  });
});
