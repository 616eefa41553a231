// Issue 15 "wake latency": a terminal transition's NOTIFY carries the row as written when it fits, so a wait woken
// on another instance answers without reading the row back; a row too big for a notification is announced by
// status alone and the woken wait reads it once.
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { seedAgent } from '../helpers/fixtures.ts';
import { findRun, insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';
import { failQueuedTimedOut } from '../../src/runs/timeout-transitions.ts';
import { parseRunNotification, rowFromNotification, RUN_EVENTS_CHANNEL } from '../../src/runs/run-announcements.ts';
import { watchTerminal } from '../../src/sync/await-run.ts';
import { RunWatch } from '../../src/runs/run-watch.ts';
import type { Db } from '../../src/storage/db.ts';
import { permissiveLimiter } from './sync-helpers.ts';

let t: TestApp;

beforeAll(async () => {
  t = await createTestApp({ limiter: permissiveLimiter });
});
afterAll(async () => {
  await t.close();
});

async function queuedRun(agentId: number, input: unknown = { q: 'x' }) {
  return insertRun(t.db, { agentId, status: 'queued', source: 'trigger_and_wait', now: t.ctx.clock.now(), input });
}

/** Notifications on the runs channel of this database, by run id. */
async function hear(): Promise<{ payloads: Map<number, string[]>; stop: () => Promise<void> }> {
  const payloads = new Map<number, string[]>();
  const stop = await t.db.listen(RUN_EVENTS_CHANNEL, (payload) => {
    const id = parseRunNotification(payload).runId;
    payloads.set(id, [...(payloads.get(id) ?? []), payload]);
  });
  return { payloads, stop };
}

describe('the run notification format (parseRunNotification)', () => {
  it('reads `id:status` and `id:status:{row}` alike; the row is left unparsed', () => {
    expect(parseRunNotification('12:waiting')).toEqual({ runId: 12, status: 'waiting', rowJson: null });
    expect(parseRunNotification('7:completed:{"id":7,"note":"a:b"}')).toEqual({ runId: 7, status: 'completed', rowJson: '{"id":7,"note":"a:b"}' });
  });

  it('a payload that is not a row is no row (the listener then reads it)', () => {
    expect(rowFromNotification('{not json')).toBeNull();
    expect(rowFromNotification('[1,2]')).toBeNull();
    expect(rowFromNotification('{"id":"7","status":"completed"}')).toBeNull();
  });
});

describe('a terminal transition announces its row', () => {
  it('the row carried is the row as findRun reads it (timestamps, bigints, jsonb), for every terminal writer', async () => {
    const { agent } = await seedAgent(t);
    const heard = await hear();
    try {
      const completed = await queuedRun(agent.id, { nested: { list: [1, 'two', null] }, unicode: 'é✓' });
      await transition(t.db, completed.id, 'started', 'running', t.ctx.clock.now(), {}, { via: 'callback' });
      await transition(t.db, completed.id, 'terminal', 'completed', t.ctx.clock.now(), { outputData: { answer: 42, outputs: 3 }, outputs: 3, externalRunId: 'ext-1' }, { via: 'callback' });
      const failed = await queuedRun(agent.id);
      await transition(t.db, failed.id, 'terminal', 'failed', t.ctx.clock.now(), { error: { message: 'boom' } }, { via: 'callback' });
      // The timeout sweep's set-based write announces through the same fragment.
      const timedOut = await queuedRun(agent.id);
      await t.db.query(`UPDATE runs SET created_at = now() - interval '1 hour' WHERE id = $1`, [timedOut.id]);
      expect((await failQueuedTimedOut(t.db, t.ctx.clock.now(), 60_000, 'queued too long')).map((r) => r.id)).toContain(timedOut.id);

      for (const id of [completed.id, failed.id, timedOut.id]) {
        await vi.waitFor(() => expect(heard.payloads.get(id)?.length).toBe(1));
        const n = parseRunNotification(heard.payloads.get(id)![0]!);
        expect(n.rowJson).not.toBeNull();
        expect(rowFromNotification(n.rowJson!)).toEqual(await findRun(t.db, id));
      }
    } finally {
      await heard.stop();
    }
  });

  it('a row too big for a notification is announced by status alone, and a wait woken by it reads the row', async () => {
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const heard = await hear();
    const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000, fresh: true }).outcome;
    try {
      const big = { text: 'x'.repeat(20_000), more: Array.from({ length: 500 }, (_, i) => `item ${i} ${Math.random()}`) };
      await transition(t.db, run.id, 'terminal', 'completed', t.ctx.clock.now(), { outputData: big }, { via: 'admin' });
      await vi.waitFor(() => expect(heard.payloads.get(run.id)).toEqual([`${run.id}:completed`]));
      // Nothing published the written row here: only the notification (or the backstop) wakes the wait.
      expect(await waiting).toMatchObject({ kind: 'terminal', run: { status: 'completed', output_data: big } });
    } finally {
      await heard.stop();
    }
  });
});

describe.skipIf(!onPostgres)('a wait on another instance (PostgreSQL LISTEN/NOTIFY)', () => {
  it('is answered from the notification: instance A reads nothing back', async () => {
    const b = await t.another();
    t.ctx.waits.periodMs = 600_000; // no backstop tick within the test
    const { agent } = await seedAgent(t);
    const run = await queuedRun(agent.id);
    const waiting = watchTerminal(t.ctx, run.id, { deadline: Date.now() + 20_000, fresh: true }).outcome;
    const reads = vi.spyOn(t.ctx.db, 'query');
    try {
      const moved = await transition(b.app.ctx.db, run.id, 'terminal', 'completed', t.ctx.clock.now(), { outputData: { from: 'B' } }, { via: 'callback' });
      if (moved.kind !== 'applied') throw new Error(moved.kind);
      const out = await waiting;
      expect(out).toEqual({ kind: 'terminal', run: await findRun(b.app.ctx.db, run.id) });
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
      t.ctx.waits.periodMs = 1_500;
    }
  });
});

describe('RunWatch on a notification (ordering)', () => {
  /** A RunWatch on a database stand-in whose only use is to hand it notifications. */
  async function watchWithNotify(): Promise<{ watch: RunWatch; notify: (payload: string) => void }> {
    let deliver: (payload: string) => void = () => {};
    const db = {
      listen: async (_channel: string, onMessage: (payload: string) => void) => {
        deliver = onMessage;
        return async () => {};
      },
    } as unknown as Db;
    const watch = new RunWatch(db);
    await watch.start();
    return { watch, notify: (payload) => deliver(payload) };
  }

  it('a completion without its row tells the completion listeners first (a task wait starts its return-value read while the row is read)', async () => {
    const { watch, notify } = await watchWithNotify();
    const heard: string[] = [];
    watch.watch(5, (status, run) => heard.push(`status ${status} ${run ? 'with row' : 'without row'}`));
    watch.watchCompletion(5, () => heard.push('completion'));
    notify('5:completed');
    expect(heard).toEqual(['completion', 'status completed without row']);
  });

  it('a completion with its row hands the row over and tells no completion listener (nothing is left to read)', async () => {
    const { watch, notify } = await watchWithNotify();
    const heard: unknown[] = [];
    watch.watch(6, (status, run) => heard.push([status, run]));
    watch.watchCompletion(6, () => heard.push('completion'));
    notify('6:completed:{"id":6,"status":"completed","created_at":"2026-01-02T03:04:05.678+00:00","output_data":{"a":1}}');
    expect(heard).toEqual([['completed', { id: 6, status: 'completed', created_at: new Date('2026-01-02T03:04:05.678Z'), output_data: { a: 1 } }]]);
  });

  it('a row that cannot be read is treated as no row; other statuses and unwatched runs are left alone', async () => {
    const { watch, notify } = await watchWithNotify();
    const heard: unknown[] = [];
    watch.watch(7, (status, run) => heard.push([status, run ?? null]));
    watch.watchCompletion(7, () => heard.push('completion'));
    notify('7:failed:{broken');
    notify('8:completed');
    expect(heard).toEqual([['failed', null]]);
  });
});
