// admin-api.md "Runs and audit": GET /runs (newest first, cursor pages), GET /runs/{runId}, GET /audit.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedUser } from '../helpers/fixtures.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { findRun, insertRun, type RunRow } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { appendAudit } from '../../src/orgs/audit-repo.ts';
import { call, expectInvalid, ok } from './admin-helpers.ts';

const clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(() => t.close());

async function run(agentId: number, extra: Partial<Parameters<typeof insertRun>[1]> = {}): Promise<RunRow> {
  clock.advance(1000);
  const { id } = await insertRun(t.db, { agentId, status: 'queued', source: 'trigger', now: clock.now(), ...extra });
  return (await findRun(t.db, id))!;
}

describe('GET /runs/{runId}', () => {
  it('admin-api.md: answers exactly the listed fields, timestamps as ISO strings', async () => {
    const seeded = await seedAgent(t);
    const userId = await seedUser(t, { orgId: seeded.orgId });
    const created = await run(seeded.agent.id, {
      externalRunId: 'exec-42',
      input: { webhook: { headers: { authorization: '[REDACTED]' } } },
      metadata: { source: 'crm' },
      createdBy: userId,
    });
    clock.advance(500);
    await transition(t.db, created.id, 'started', 'running', clock.now(), {}, { via: 'admin' });
    clock.advance(2000);
    await transition(t.db, created.id, 'terminal', 'completed', clock.now(), { outputData: { summary: 'ok', outputs: 3 }, outputs: 3 }, { via: 'admin' });

    const body = await ok(t, 200, 'GET', `/runs/${created.id}`);
    expect(body).toEqual({
      runId: created.id,
      agentId: seeded.agent.id,
      status: 'completed',
      output_data: { summary: 'ok', outputs: 3 },
      outputs: 3,
      error: null,
      duration_ms: 2000,
      started_at: new Date(created.created_at.getTime() + 500).toISOString(),
      completed_at: new Date(created.created_at.getTime() + 2500).toISOString(),
      created_at: created.created_at.toISOString(),
      created_by: userId,
      source: 'trigger', // issue 14: how the run started
      external_run_id: 'exec-42',
      metadata: { source: 'crm' },
      input: { webhook: { headers: { authorization: '[REDACTED]' } } },
      runtime_note: null, // issue 11: what the service could not do at the runtime
      wait: null, // issue 14: what a waiting run waits for
      // issue 14: every status entered, with the path that wrote it (the source for the first)
      timeline: [
        { status: 'queued', via: 'trigger', at: created.created_at.toISOString() },
        { status: 'running', via: 'admin', at: new Date(created.created_at.getTime() + 500).toISOString() },
        { status: 'completed', via: 'admin', at: new Date(created.created_at.getTime() + 2500).toISOString() },
      ],
      replay_of: null, // issue 14: admin replay links, both ways
      replays: [],
    });
  });

  it('spec 2.2: a queued run shows null timestamps and outputs 0; a callback error object is shown as stored', async () => {
    const seeded = await seedAgent(t);
    const queued = await run(seeded.agent.id);
    expect(await ok(t, 200, 'GET', `/runs/${queued.id}`)).toMatchObject({ status: 'queued', started_at: null, completed_at: null, duration_ms: null, outputs: 0, output_data: null, created_by: null, external_run_id: null });
    await transition(t.db, queued.id, 'terminal', 'failed', clock.now(), { error: { name: 'Error', message: 'boom' } }, { via: 'admin' });
    expect((await ok(t, 200, 'GET', `/runs/${queued.id}`)).error).toEqual({ name: 'Error', message: 'boom' });
  });

  it('admin-api.md: unknown, non-numeric and out-of-range run ids are 404', async () => {
    for (const id of ['999999', 'abc', '0', '-3', '123456789012345678']) expect((await call(t, 'GET', `/runs/${id}`)).statusCode, id).toBe(404);
  });
});

describe('GET /runs', () => {
  it('admin-api.md: newest first, limit pages with an opaque next_cursor until null', async () => {
    const seeded = await seedAgent(t);
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) ids.push((await run(seeded.agent.id)).id);
    const newestFirst = [...ids].reverse();
    const seen: number[] = [];
    let cursor: string | null = null;
    let pages = 0;
    do {
      const page: { data: Array<{ runId: number; agentId: number }>; next_cursor: string | null } = await ok(
        t,
        200,
        'GET',
        `/runs?agent_id=${seeded.agent.id}&limit=2${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
      );
      expect(page.data.length).toBeLessThanOrEqual(2);
      seen.push(...page.data.map((r) => r.runId));
      cursor = page.next_cursor;
      pages++;
    } while (cursor !== null);
    expect(seen).toEqual(newestFirst);
    expect(pages).toBe(3);
    // A run created while paging does not shift later pages (keyset on id).
    const first = await ok(t, 200, 'GET', `/runs?agent_id=${seeded.agent.id}&limit=2`);
    await run(seeded.agent.id);
    const second = await ok(t, 200, 'GET', `/runs?agent_id=${seeded.agent.id}&limit=2&cursor=${first.next_cursor}`);
    expect(second.data.map((r: { runId: number }) => r.runId)).toEqual(newestFirst.slice(2, 4));
  });

  it('admin-api.md: filters by agent_id and status; default limit 50; runs are shown as GET /runs/{runId} shows them', async () => {
    const a = await seedAgent(t);
    const b = await seedAgent(t);
    const ra = await run(a.agent.id);
    await run(b.agent.id);
    const done = await run(a.agent.id);
    await transition(t.db, done.id, 'terminal', 'completed', clock.now(), { outputData: { ok: true } }, { via: 'admin' });
    const byAgent = await ok(t, 200, 'GET', `/runs?agent_id=${a.agent.id}`);
    expect(byAgent.data.map((r: { runId: number }) => r.runId)).toEqual([done.id, ra.id]);
    expect(byAgent.next_cursor).toBeNull();
    // The list shows each run as the detail does, without the detail's wait state, timeline and replay links.
    const { wait: _wait, timeline: _timeline, replay_of: _replayOf, replays: _replays, ...listed } = await ok(t, 200, 'GET', `/runs/${done.id}`);
    expect(byAgent.data[0]).toEqual(listed);
    const completed = await ok(t, 200, 'GET', `/runs?agent_id=${a.agent.id}&status=completed`);
    expect(completed.data.map((r: { runId: number }) => r.runId)).toEqual([done.id]);
    expect((await ok(t, 200, 'GET', '/runs?agent_id=999999')).data).toEqual([]);
    for (let i = 0; i < 55; i++) await run(b.agent.id);
    const all = await ok(t, 200, 'GET', '/runs');
    expect(all.data).toHaveLength(50);
    expect(all.next_cursor).toEqual(expect.any(String));
    expect((await ok(t, 200, 'GET', '/runs?limit=200')).data.length).toBeGreaterThan(50);
  });

  it('admin-api.md: limit outside 1–200, a bad status, agent_id or cursor are 400 naming the parameter', async () => {
    for (const limit of ['0', '201', 'ten', '-1', '1.5']) expectInvalid(await call(t, 'GET', `/runs?limit=${limit}`), 'querystring.limit');
    expectInvalid(await call(t, 'GET', '/runs?status=done'), 'querystring.status');
    expectInvalid(await call(t, 'GET', '/runs?agent_id=abc'), 'querystring.agent_id');
    for (const cursor of ['garbage', Buffer.from('runs:abc').toString('base64url'), Buffer.from('runs:0').toString('base64url')]) {
      expectInvalid(await call(t, 'GET', `/runs?cursor=${cursor}`), 'querystring.cursor');
    }
  });
});

describe('GET /audit', () => {
  it('admin-api.md: newest first with {id, at, action, actor_user_id, agent_id, run_id, details}; filters and limit', async () => {
    const seeded = await seedAgent(t);
    const userId = await seedUser(t, { orgId: seeded.orgId });
    const r = await run(seeded.agent.id);
    clock.advance(1000);
    await appendAudit(t.db, { action: 'run.waitpoint_completed', actorUserId: userId, agentId: seeded.agent.id, runId: r.id, details: { via: 'test' } }, clock.now());
    await ok(t, 200, 'POST', `/agents/${seeded.agent.id}/keys/zone/rotate`);
    const body = await ok(t, 200, 'GET', `/audit?agent_id=${seeded.agent.id}`);
    expect(body.data.map((e: { action: string }) => e.action)).toEqual(['agent.key_rotated', 'run.waitpoint_completed']);
    expect(body.data[1]).toEqual({
      id: expect.any(Number),
      at: clock.now().toISOString(),
      action: 'run.waitpoint_completed',
      actor_user_id: userId,
      agent_id: seeded.agent.id,
      run_id: r.id,
      details: { via: 'test' },
    });
    // Issue 40 item 1: paged like every admin list; two entries fit one page.
    expect(Object.keys(body).sort()).toEqual(['data', 'next_cursor']);
    expect(body.next_cursor).toBeNull();
    const filtered = await ok(t, 200, 'GET', `/audit?agent_id=${seeded.agent.id}&action=run.waitpoint_completed`);
    expect(filtered.data).toHaveLength(1);
    expect((await ok(t, 200, 'GET', '/audit?limit=1')).data).toHaveLength(1);
    expect((await ok(t, 200, 'GET', '/audit?action=no.such.action')).data).toEqual([]);
  });

  it('admin-api.md: bad audit query parameters are 400 naming them', async () => {
    expectInvalid(await call(t, 'GET', '/audit?limit=0'), 'querystring.limit');
    expectInvalid(await call(t, 'GET', '/audit?limit=201'), 'querystring.limit');
    expectInvalid(await call(t, 'GET', '/audit?agent_id=x'), 'querystring.agent_id');
    expectInvalid(await call(t, 'GET', '/audit?action=%00'), 'querystring.action');
  });
});
