import v8 from 'node:v8';
import vm from 'node:vm';
import { setMaxListeners } from 'node:events';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { request } from 'undici';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { readRun, seedAgent } from '../helpers/fixtures.ts';
import { N8nFake, n8nAnswers } from '../fakes/n8n-fake.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { DEADLINE_READ_MS, watchTerminal } from '../../src/sync/await-run.ts';
import { callback, permissiveLimiter, platformRunId, sleep, waitForRun, workflowAgent } from './sync-helpers.ts';

const n8n = new N8nFake();
let t: TestApp;

beforeAll(async () => {
  await n8n.start();
  t = await createTestApp({ limiter: permissiveLimiter });
});
afterAll(async () => {
  await n8n.stop();
  await t.close();
});

async function queuedRun(agentId: number) {
  return insertRun(t.db, { agentId, status: 'queued', source: 'trigger_and_wait', now: t.ctx.clock.now() });
}

describe('await-run: waking synchronous waits (decisions.md "Scale-out")', () => {
  it('spec 4.2: a wait resolves with the terminal row as soon as a transition is published', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000 }).outcome;
    const moved = await transition(t.db, run.id, 'terminal', 'completed', t.ctx.clock.now(), { outputData: { a: 1 } }, { via: 'admin' });
    expect(moved.kind).toBe('applied');
    t.ctx.runWatch.publish(run.id, 'completed');
    const out = await waiting;
    expect(out.kind).toBe('terminal');
    expect(out.kind === 'terminal' && out.run.output_data).toEqual({ a: 1 });
    expect(t.ctx.waits.watchedRunCount).toBe(0);
  });

  it('spec 4.2: an already terminal run resolves at once (subscribed before the first read)', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    await transition(t.db, run.id, 'terminal', 'failed', t.ctx.clock.now(), { error: 'x' }, { via: 'admin' });
    const out = await watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000 }).outcome;
    expect(out).toMatchObject({ kind: 'terminal', run: { status: 'failed' } });
  });

  it('a write on this instance hands its row to the wait: the wait reads nothing back', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000, fresh: true }).outcome;
    const moved = await transition(t.db, run.id, 'terminal', 'completed', t.ctx.clock.now(), { outputData: { b: 2 } }, { via: 'admin' });
    if (moved.kind !== 'applied') throw new Error(moved.kind);
    const reads = vi.spyOn(t.ctx.db, 'query');
    try {
      t.ctx.runWatch.publishRun(moved.run);
      const out = await waiting;
      expect(out).toEqual({ kind: 'terminal', run: moved.run });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
    }
  });

  it('spec 4.2: trigger-and-wait on an answering workflow costs two writes and no reads', async () => {
    const a = await workflowAgent(t, n8n, { json: { done: true } });
    const statements: string[] = [];
    const real = t.ctx.db.query.bind(t.ctx.db);
    const counting = vi.spyOn(t.ctx.db, 'query').mockImplementation(((sql: string, params?: readonly unknown[]) => {
      statements.push(sql.replace(/\s+/g, ' ').trim());
      return real(sql, params);
    }) as typeof t.ctx.db.query);
    try {
      await t.ctx.agents.get(a.agent.id); // warm the agent cache as a second call would find it
      await t.ctx.agents.connectionIds(a.agent.id);
      await t.ctx.agents.runtime(a.agent.runtime_id!);
      statements.length = 0;
      const res = await t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-wait`, headers: a.ingestAuth, payload: {} });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'completed', output_data: { done: true } });
      // No first look (the wait was subscribed before the runtime knew the run); the row comes with the wake-up.
      const writes = statements.filter((q) => !q.startsWith('SELECT'));
      expect(writes, statements.join('\n')).toHaveLength(2);
      expect(writes[0]).toMatch(/^WITH inserted AS \( ?INSERT INTO runs/);
      expect(writes[1]).toMatch(/^WITH moved AS \( ?UPDATE runs/);
      const reads = statements.filter((q) => q.startsWith('SELECT'));
      // On PostgreSQL the write's own NOTIFY echo, on another connection, can overtake its answer under load and
      // cost one read; PGlite delivers it in order.
      expect(reads.length, statements.join('\n')).toBeLessThanOrEqual(onPostgres ? 1 : 0);
      expect(reads.every((q) => q === 'SELECT * FROM runs WHERE id = $1')).toBe(true);
    } finally {
      counting.mockRestore();
    }
  });

  it('decisions.md: a lost notification only adds latency: the shared backstop re-check finds the terminal run', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    t.ctx.waits.periodMs = 100;
    try {
      const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000 }).outcome;
      await sleep(50);
      // Written behind the service's back: no NOTIFY, no publish.
      await t.db.query(`UPDATE runs SET status = 'completed', completed_at = now() WHERE id = $1`, [run.id]);
      expect(await waiting).toMatchObject({ kind: 'terminal', run: { status: 'completed' } });
    } finally {
      t.ctx.waits.periodMs = 1_500;
    }
  });

  it('spec 8.3: the deadline resolves with the current (non-terminal) row', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const out = await watchTerminal(t.ctx, run.id, { deadline: Date.now() + 100 }).outcome;
    expect(out).toMatchObject({ kind: 'timeout', run: { id: run.id, status: 'queued' } });
  });

  it('issue 11: a deadline read that fails or hangs (database down) ends the wait as unknown, within DEADLINE_READ_MS', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    for (const broken of [() => Promise.reject(refused), () => new Promise<never>(() => {})]) {
      const spy = vi.spyOn(t.ctx.db, 'query').mockImplementation(broken);
      try {
        const started = Date.now();
        const out = await watchTerminal(t.ctx, run.id, { deadline: Date.now() + 100, fresh: true }).outcome;
        expect(out).toEqual({ kind: 'unknown' });
        expect(Date.now() - started).toBeLessThan(100 + DEADLINE_READ_MS + 500);
      } finally {
        spy.mockRestore();
      }
    }
    expect(t.ctx.waits.watchedRunCount).toBe(0);
  });

  it('issue 11: trigger-and-wait whose database is down at the end of the window answers 202 with the run id; the silent run is not failed', async () => {
    const a = await workflowAgent(t, n8n, n8nAnswers.never());
    const pending = t.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-wait`, headers: a.ingestAuth, payload: { timeoutMs: 1_000 } });
    await vi.waitFor(() => expect(t.ctx.waits.watchedRunCount).toBe(1));
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
    const spy = vi.spyOn(t.ctx.db, 'query').mockRejectedValue(refused);
    let res;
    try {
      res = await pending;
    } finally {
      spy.mockRestore();
    }
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json()).toEqual({ runId: expect.any(Number), agentId: a.agent.id, status: 'queued', timedOut: true });
    expect(await readRun(t, res.json().runId)).toMatchObject({ status: 'queued' });
    t.ctx.heldCalls.abort(res.json().runId, 'window'); // the never-answering workflow's call
  });

  it('spec 4.2: a caller that disconnects stops waiting; the run is untouched', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const ac = new AbortController();
    const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000, signal: ac.signal }).outcome;
    ac.abort();
    expect(await waiting).toEqual({ kind: 'aborted' });
    expect(await readRun(t, run.id)).toMatchObject({ status: 'queued' });
  });

  it('issue 4: 10,000 concurrent waits each cost well under 20 KiB, and all of them are released', async () => {
    const { agent } = await seedAgent(t);
    const { rows } = await t.db.query<{ id: number }>(
      `INSERT INTO runs (agent_id, status, source) SELECT $1, 'queued', 'bench' FROM generate_series(1, 10000) RETURNING id`,
      [agent.id],
    );
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const ac = new AbortController();
    setMaxListeners(0, ac.signal); // one shared signal for 10,000 waits in this test
    gc();
    const before = process.memoryUsage().heapUsed;
    const waits = rows.map((r) => watchTerminal(t.ctx, Number(r.id), { deadline: Date.now() + 120_000, signal: ac.signal }).outcome);
    // Let the batched first look finish, so only the waits themselves remain.
    await new Promise((r) => setImmediate(r));
    await t.db.query('SELECT 1');
    await sleep(200);
    gc();
    const perWait = (process.memoryUsage().heapUsed - before) / rows.length;
    expect(t.ctx.waits.watchedRunCount).toBe(10_000);
    ac.abort();
    const outcomes = await Promise.all(waits);
    expect(outcomes.every((o) => o.kind === 'aborted')).toBe(true);
    expect(perWait).toBeLessThan(20 * 1024);
    expect(t.ctx.waits.watchedRunCount).toBe(0);
    expect(t.ctx.runWatch.watchedRuns).toBe(0);
  }, 120_000);
});

describe('await-run over real sockets', () => {
  it('spec 4.2: a caller that hangs up mid-wait does not cancel the run; the workflow still completes it', async () => {
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let seenRunId = 0;
    const a = await workflowAgent(t, n8n, async (ctx) => {
      seenRunId = platformRunId(ctx.body);
      await gate;
      return { json: { done: true } };
    });
    const base = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const ac = new AbortController();
    const pending = request(`${base}/api/agents/${a.agent.id}/runs/trigger-and-wait`, {
      method: 'POST', headers: { ...a.ingestAuth, 'content-type': 'application/json' }, body: JSON.stringify({ timeoutMs: 30_000 }), signal: ac.signal,
    }).catch((err: unknown) => err);
    await vi.waitFor(() => expect(seenRunId).toBeGreaterThan(0));
    await sleep(100);
    ac.abort();
    expect(await pending).toBeInstanceOf(Error);
    await sleep(100);
    expect(await readRun(t, seenRunId)).toMatchObject({ status: 'queued' });
    release();
    expect(await waitForRun(t, seenRunId, (r) => r.status === 'completed')).toMatchObject({ output_data: { done: true } });
    expect(t.ctx.waits.watchedRunCount).toBe(0);
  });
});

describe('await-run at shutdown', () => {
  it('decisions.md Scale-out: closing the app hands held waits back as 202; a silent workflow run is not failed', async () => {
    const t2 = await createTestApp({ limiter: permissiveLimiter });
    try {
      const a = await workflowAgent(t2, n8n, n8nAnswers.never());
      const pending = t2.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-wait`, headers: a.ingestAuth, payload: { timeoutMs: 60_000 } });
      await vi.waitFor(() => expect(t2.ctx.waits.watchedRunCount).toBe(1));
      await t2.app.close();
      const res = await pending;
      expect(res.statusCode, res.body).toBe(202);
      expect(res.json()).toMatchObject({ status: 'queued', timedOut: true });
      expect(await readRun(t2, res.json().runId)).toMatchObject({ status: 'queued' });
    } finally {
      await t2.close();
    }
  });
});

describe.skipIf(!onPostgres)('await-run across instances (PostgreSQL LISTEN/NOTIFY)', () => {
  it('issue 11: when the LISTEN connection comes back, waits look for what they missed instead of waiting for the deadline', async () => {
    const b = await t.another();
    t.ctx.waits.periodMs = 600_000; // no backstop tick within the test
    try {
      const { agent } = await seedAgent(t);
      const run = await queuedRun(agent.id);
      const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000, fresh: true }).outcome;
      // Every instance's listening connection is cut; the NOTIFY of the write below reaches nobody.
      await t.db.query("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND query ILIKE 'LISTEN %' AND pid <> pg_backend_pid()");
      await sleep(100);
      await transition(b.app.ctx.db, run.id, 'terminal', 'completed', t.ctx.clock.now(), { outputData: { missed: true } }, { via: 'admin' });
      const started = Date.now();
      expect(await waiting).toMatchObject({ kind: 'terminal', run: { status: 'completed', output_data: { missed: true } } });
      expect(Date.now() - started).toBeLessThan(5_000); // the reconnect (every 500 ms), not the 20 s deadline
    } finally {
      t.ctx.waits.periodMs = 1_500;
    }
  });

  it('decisions.md Scale-out: a wait held on instance A is woken by a callback that lands on instance B', async () => {
    const b = await t.another();
    // No backstop help within the window: only the NOTIFY from B's write can wake A in time.
    t.ctx.waits.periodMs = 600_000;
    try {
      const a = await workflowAgent(t, n8n, async (ctx) => {
        await callback(b.app, a, platformRunId(ctx.body), { type: 'output', output: { from: 'instance B' }, outputs: 2, complete: true });
        return n8nAnswers.never();
      });
      const res = await t.app.inject({
        method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger-and-wait`, headers: a.ingestAuth, payload: { timeoutMs: 20_000 },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({ status: 'completed', output_data: { from: 'instance B' }, outputs: 2 });
    } finally {
      t.ctx.waits.periodMs = 1_500;
    }
  });
});
