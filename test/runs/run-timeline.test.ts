// Issue 14, run detail: every status a run entered, with the path that wrote it, recorded by the statement that
// wrote the status (run-transitions.ts). The race between callback, poll and alert is in terminal-race.test.ts.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { sweepTimeouts } from '../../src/background/timeout-sweeper.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';

const clock = new ManualClock(new Date('2026-03-01T10:00:00Z'));
const trigger = new TriggerDevFake();
let t: TestApp;
let agent: SeededAgent;

beforeAll(async () => {
  await trigger.start();
  trigger.registerTask('my-target');
  t = await createTestApp({ clock });
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey }, target: 'my-target' });
});
afterAll(async () => {
  await t.close();
  await trigger.stop();
});

const callback = (runId: number, payload: Record<string, unknown>) =>
  t.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload });

async function triggered(): Promise<number> {
  const res = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: {} });
  expect(res.statusCode).toBe(201);
  return res.json().runId as number;
}

async function timeline(runId: number): Promise<Array<{ status: string; via: string; at: string }>> {
  const res = await t.app.inject({ method: 'GET', url: `/api/admin/runs/${runId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
  expect(res.statusCode).toBe(200);
  return res.json().timeline;
}

describe('issue 14: the run timeline (GET /api/admin/runs/{runId} → timeline)', () => {
  it('spec 4.8: an intermediate output lifts queued → running once (callback); later outputs add nothing', async () => {
    const runId = await triggered();
    clock.advance(1000);
    expect((await callback(runId, { type: 'output', output: { step: 1 } })).statusCode).toBe(200);
    expect((await callback(runId, { type: 'output', output: { step: 2 } })).statusCode).toBe(200);
    clock.advance(1000);
    expect((await callback(runId, { type: 'output', output: { step: 3 }, complete: true })).statusCode).toBe(200);
    expect(await timeline(runId)).toEqual([
      { status: 'queued', via: 'trigger', at: '2026-03-01T10:00:00.000Z' },
      { status: 'running', via: 'callback', at: '2026-03-01T10:00:01.000Z' },
      { status: 'completed', via: 'callback', at: '2026-03-01T10:00:02.000Z' },
    ]);
  });

  it('spec 4.8: reports racing on a queued run lift it once; each report is written', async () => {
    const runId = await triggered();
    clock.advance(1000);
    const reportedAt = clock.now();
    const answers = await Promise.all([1, 2, 3, 4, 5].map((step) => callback(runId, { type: 'output', output: { step }, outputs: step })));
    expect(answers.map((a) => a.statusCode)).toEqual([200, 200, 200, 200, 200]);
    expect((await timeline(runId)).map(({ status, via }) => ({ status, via }))).toEqual([
      { status: 'queued', via: 'trigger' },
      { status: 'running', via: 'callback' },
    ]);
    const { rows } = await t.db.query<{ status: string; outputs: string; started_at: Date }>('SELECT status, outputs, started_at FROM runs WHERE id = $1', [runId]);
    expect(rows[0]!.status).toBe('running');
    expect(rows[0]!.started_at).toEqual(reportedAt);
    expect([1, 2, 3, 4, 5]).toContain(Number(rows[0]!.outputs)); // the last write wins, whichever that was
  });

  it('spec 4.8 / 4.9: waiting (callback), then running again (waitpoint); the wait state is shown, never its token', async () => {
    const runId = await triggered();
    const token = trigger.createWaitpointToken();
    expect((await callback(runId, { type: 'started' })).statusCode).toBe(200);
    const waiting = await callback(runId, { type: 'waiting', tokenId: token.id, description: 'Approve the refund', output: { amount: 12 } });
    expect(waiting.statusCode).toBe(200);
    const detail = await t.app.inject({ method: 'GET', url: `/api/admin/runs/${runId}`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    expect(detail.json().wait).toEqual({ description: 'Approve the refund', url: null, output: { amount: 12 } });
    expect(detail.body).not.toContain(token.id);

    const resumed = await t.app.inject({ method: 'POST', url: `/api/runs/${runId}/waitpoint`, headers: agent.agentAuth, payload: {} });
    expect(resumed.statusCode).toBe(200);
    expect((await timeline(runId)).map(({ status, via }) => ({ status, via }))).toEqual([
      { status: 'queued', via: 'trigger' },
      { status: 'running', via: 'callback' },
      { status: 'waiting', via: 'callback' },
      { status: 'running', via: 'waitpoint' },
    ]);
  });

  it('spec 4.8: a waiting run that reports a new token is another wait, and another entry', async () => {
    const runId = await triggered();
    expect((await callback(runId, { type: 'waiting', tokenId: trigger.createWaitpointToken().id, description: 'first' })).statusCode).toBe(200);
    expect((await callback(runId, { type: 'waiting', tokenId: trigger.createWaitpointToken().id, description: 'second' })).statusCode).toBe(200);
    expect((await timeline(runId)).map(({ status, via }) => ({ status, via }))).toEqual([
      { status: 'queued', via: 'trigger' },
      { status: 'waiting', via: 'callback' },
      { status: 'waiting', via: 'callback' },
    ]);
  });

  it('spec 8.2: a run failed by the timeout sweeper shows `timeout`', async () => {
    const runId = await triggered();
    clock.advance(11 * 60_000);
    await sweepTimeouts(t.ctx);
    expect((await timeline(runId)).map(({ status, via }) => ({ status, via }))).toEqual([
      { status: 'queued', via: 'trigger' },
      { status: 'failed', via: 'timeout' },
    ]);
  });

  it('spec 4.4 / 4.5: a registered run starts at running (register); an ingested one at its status (ingest), a repeated status adds nothing', async () => {
    const reg = await t.app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/register`, headers: agent.ingestAuth, payload: { externalRunId: 'run_timeline_reg' } });
    expect(reg.statusCode).toBe(201);
    expect((await timeline(reg.json().runId)).map(({ status, via }) => ({ status, via }))).toEqual([{ status: 'running', via: 'register' }]);

    const standalone = await seedAgent(t, { managed_by: 'standalone' });
    const ingest = (status: string) => t.app.inject({
      method: 'POST', url: `/api/agents/${standalone.agent.id}/runs/ingest`, headers: standalone.ingestAuth,
      payload: { externalRunId: 'run_timeline_ing', status },
    });
    expect((await ingest('running')).statusCode).toBe(200);
    clock.advance(1000);
    expect((await ingest('running')).statusCode).toBe(200); // the same status again updates the record, no entry
    const done = await ingest('completed');
    expect(done.statusCode).toBe(200);
    expect((await ingest('completed')).statusCode).toBe(200); // a terminal status repeated: no entry either
    expect((await timeline(done.json().runId)).map(({ status, via }) => ({ status, via }))).toEqual([
      { status: 'running', via: 'ingest' },
      { status: 'completed', via: 'ingest' },
    ]);
  });
});

describe('the first entry of a run this service starts is implied by the run row, not stored (decisions.md)', () => {
  const stored = async (runId: number) =>
    (await t.db.query<{ status: string; via: string }>('SELECT status, via FROM run_transitions WHERE run_id = $1 ORDER BY id', [runId])).rows;

  it('/trigger stores no first row; the timeline shows queued via trigger at the run\'s creation, then what was stored', async () => {
    const runId = await triggered();
    expect(await stored(runId)).toEqual([]);
    clock.advance(1000);
    expect((await callback(runId, { type: 'started' })).statusCode).toBe(200);
    expect(await stored(runId)).toEqual([{ status: 'running', via: 'callback' }]);
    const created = (await t.db.query<{ created_at: Date }>('SELECT created_at FROM runs WHERE id = $1', [runId])).rows[0]!.created_at;
    expect(await timeline(runId)).toEqual([
      { status: 'queued', via: 'trigger', at: created.toISOString() },
      { status: 'running', via: 'callback', at: new Date(created.getTime() + 1000).toISOString() },
    ]);
  });

  it('a run whose first row was stored (inserted before the entry was implied) shows it once', async () => {
    const runId = await triggered();
    const at = clock.now();
    await t.db.query(`INSERT INTO run_transitions (run_id, status, via, at) VALUES ($1, 'queued', 'trigger', $2)`, [runId, at]);
    expect(await timeline(runId)).toEqual([{ status: 'queued', via: 'trigger', at: at.toISOString() }]);
  });

  it('older than the timeline (no rows at all): a started run shows its implied entry, a registered one nothing', async () => {
    const now = clock.now();
    const started = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'zone', now });
    const registered = await insertRun(t.db, { agentId: agent.agent.id, status: 'running', source: 'register', now, startedAt: now, externalRunId: 'timeline-old-reg' });
    await t.db.query('DELETE FROM run_transitions WHERE run_id = ANY($1::bigint[])', [[started.id, registered.id]]);
    expect(await timeline(started.id)).toEqual([{ status: 'queued', via: 'zone', at: now.toISOString() }]);
    expect(await timeline(registered.id)).toEqual([]);
  });

  it('a run of a starting source inserted in another status (a fixture) stores its first entry, and shows only that', async () => {
    const now = clock.now();
    const run = await insertRun(t.db, { agentId: agent.agent.id, status: 'completed', source: 'trigger', now, externalRunId: 'timeline-fixture' });
    expect(await stored(run.id)).toEqual([{ status: 'completed', via: 'trigger' }]);
    expect((await timeline(run.id)).map(({ status, via }) => ({ status, via }))).toEqual([{ status: 'completed', via: 'trigger' }]);
  });
});
