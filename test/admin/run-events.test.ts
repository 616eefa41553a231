// Issue 14 "Runs update live": GET /api/admin/runs/events over a real socket (an SSE stream never ends, so inject
// cannot read it), and the run feed behind it (admin/run-feed.ts).
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { onPostgres } from '../helpers/test-db.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { loadConfig, type LiveStreamSettings } from '../../src/config.ts';
import { RunFeed } from '../../src/admin/run-feed.ts';
import type { RunChange } from '../../src/runs/run-changes.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition } from '../../src/runs/run-transitions.ts';

// Fast enough for tests (the defaults are 15 s, 2 s and 5 s). The apps of this file are built with this object as
// their config's, so a test may change a cap for its own duration.
const liveStreamSettings: LiveStreamSettings = { ...loadConfig({}).liveStreams, heartbeatMs: 150, pollMs: 150, recheckMs: 150 };
const withLiveSettings = { config: { liveStreams: liveStreamSettings } };

const trigger = new TriggerDevFake();
let t: TestApp;
let base: string;
let agent: SeededAgent;

beforeAll(async () => {
  await trigger.start();
  trigger.registerTask('my-target');
  t = await createTestApp(withLiveSettings);
  base = await listen(t);
  agent = await seedAgent(t, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey } });
});
afterAll(async () => {
  await t.close();
  await trigger.stop();
});

async function listen(app: TestApp): Promise<string> {
  await app.app.listen({ port: 0, host: '127.0.0.1' });
  return `http://127.0.0.1:${(app.app.server.address() as AddressInfo).port}`;
}

/** An open stream: its raw text so far, and its run events, parsed. */
class Stream {
  text = '';
  ended = false;
  private readonly abort = new AbortController();
  private waiters: Array<() => void> = [];

  static async open(url: string, headers: Record<string, string> = {}): Promise<Stream> {
    const s = new Stream();
    const res = await fetch(url, { headers: { authorization: `Bearer ${ADMIN_TOKEN}`, ...headers }, signal: s.abort.signal });
    s.status = res.status;
    s.headers = res.headers;
    if (res.status === 200) void s.pump(res.body!);
    else s.body = await res.text();
    return s;
  }

  status = 0;
  headers = new Headers();
  body = '';

  get events(): RunChange[] {
    return [...this.text.matchAll(/event: run\ndata: (.*)\n\n/g)].map((m) => JSON.parse(m[1]!) as RunChange);
  }

  /** Resolves once `check` holds on the stream, or fails after `ms`. */
  async until(check: (s: Stream) => boolean, ms = 5_000): Promise<void> {
    const deadline = Date.now() + ms;
    while (!check(this)) {
      if (Date.now() > deadline) throw new Error(`stream condition not met in ${ms} ms; got:\n${this.text}`);
      await new Promise<void>((resolve) => {
        this.waiters.push(resolve);
        setTimeout(resolve, 50);
      });
    }
  }

  close(): void {
    this.abort.abort();
  }

  private async pump(body: ReadableStream<Uint8Array>): Promise<void> {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of body) {
        this.text += decoder.decode(chunk, { stream: true });
        for (const w of this.waiters.splice(0)) w();
      }
    } catch {
      // aborted by the test
    }
    this.ended = true;
    for (const w of this.waiters.splice(0)) w();
  }
}

const live = (s: Stream) => s.text.includes('retry: 2000');
const hasEvent = (runId: number, status: string) => (s: Stream) => s.events.some((e) => e.runId === runId && e.status === status);

async function triggerRun(app = t.app): Promise<number> {
  const res = await app.inject({ method: 'POST', url: `/api/agents/${agent.agent.id}/runs/trigger`, headers: agent.ingestAuth, payload: { input: {} } });
  expect(res.statusCode).toBe(201);
  return res.json<{ runId: number }>().runId;
}

const complete = (runId: number, app = t.app) =>
  app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: agent.agentAuth, payload: { type: 'output', output: { ok: 1 }, complete: true } });

describe('issue 14: GET /api/admin/runs/events', () => {
  it('streams an event when a run is triggered and when it completes, with the SSE headers', async () => {
    const s = await Stream.open(`${base}/api/admin/runs/events`);
    expect(s.status).toBe(200);
    expect(s.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    expect(s.headers.get('cache-control')).toBe('no-store');
    expect(s.headers.get('x-accel-buffering')).toBe('no');
    await s.until(live);

    const runId = await triggerRun();
    await s.until(hasEvent(runId, 'queued'));
    expect((await complete(runId)).statusCode).toBe(200);
    await s.until(hasEvent(runId, 'completed'));

    const done = s.events.find((e) => e.runId === runId && e.status === 'completed')!;
    expect(done).toEqual({ runId, agentId: agent.agent.id, orgId: agent.orgId, status: 'completed', updated_at: expect.any(String) });
    expect(new Date(done.updated_at).toISOString()).toBe(done.updated_at);
    expect(s.text).toMatch(new RegExp(`id: ${done.updated_at.replace(/\./g, '\\.')}/${runId}\nevent: run`));
    s.close();
  });

  it('sends a `: ping` comment as a heartbeat', async () => {
    const s = await Stream.open(`${base}/api/admin/runs/events`);
    await s.until((x) => x.text.includes(': ping\n\n'), 2_000);
    s.close();
  });

  it('replays the changes after ?since= (a few seconds early), then goes on live', async () => {
    const before = new Date(Date.now() - 1_000).toISOString();
    const runId = await triggerRun();
    const s = await Stream.open(`${base}/api/admin/runs/events?since=${encodeURIComponent(before)}`);
    await s.until(hasEvent(runId, 'queued'));
    s.close();
  });

  it('a malformed ?since= is 400 naming it, before any streaming', async () => {
    const s = await Stream.open(`${base}/api/admin/runs/events?since=yesterday`);
    expect(s.status).toBe(400);
    expect(JSON.parse(s.body)).toMatchObject({ code: 'invalid_body', error: expect.stringContaining('querystring.since') });
  });

  it('refuses streams over the per-instance cap with 503 service_unavailable', async () => {
    const cap = liveStreamSettings.maxStreams;
    const open = await Stream.open(`${base}/api/admin/runs/events`);
    await open.until(live);
    liveStreamSettings.maxStreams = 1;
    try {
      const refused = await Stream.open(`${base}/api/admin/runs/events`);
      expect(refused.status).toBe(503);
      expect(refused.headers.get('retry-after')).toBe('5');
      expect(JSON.parse(refused.body)).toMatchObject({ code: 'service_unavailable', requestId: expect.any(String) });
    } finally {
      liveStreamSettings.maxStreams = cap;
      open.close();
    }
  });

  it('the admin token is required (401 before streaming)', async () => {
    const s = await Stream.open(`${base}/api/admin/runs/events`, { authorization: 'Bearer nope' });
    expect(s.status).toBe(401);
  });

  it('app close ends open streams and does not hang', async () => {
    const other = await createTestApp(withLiveSettings);
    const url = await listen(other);
    const s = await Stream.open(`${url}/api/admin/runs/events`);
    await s.until(live);
    await other.close();
    await s.until((x) => x.ended, 2_000);
  }, 60_000); // a second PGlite app takes a while to start
});

describe('issue 14: the run feed', () => {
  it('filters events by organization; null is every organization', async () => {
    const orgA = await seedOrg(t, 'A');
    const orgB = await seedOrg(t, 'B');
    const [a, b] = [await seedAgent(t, { orgId: orgA }), await seedAgent(t, { orgId: orgB })];
    const feed = new RunFeed(t.db, t.ctx.log, { pollMs: 100 });
    const got = { a: [] as RunChange[], b: [] as RunChange[], all: [] as RunChange[] };
    feed.subscribe({ orgIds: [orgA] }, (e) => got.a.push(e));
    const unsubscribeB = feed.subscribe({ orgIds: [orgB.toUpperCase()] }, (e) => got.b.push(e));
    feed.subscribe({ orgIds: null }, (e) => got.all.push(e));
    await feed.ready();
    try {
      const now = new Date();
      const ra = await insertRun(t.db, { agentId: a.agent.id, status: 'queued', source: 'trigger', now });
      const rb = await insertRun(t.db, { agentId: b.agent.id, status: 'queued', source: 'trigger', now });
      await waitFor(() => got.all.filter((e) => e.runId === ra.id || e.runId === rb.id).length === 2);
      expect(got.a.map((e) => e.runId)).toEqual([ra.id]);
      expect(got.b.map((e) => e.runId)).toEqual([rb.id]);

      // Unsubscribed: nothing more; an output report (same status) is not a status change.
      unsubscribeB();
      await transition(t.db, rb.id, 'terminal', 'completed', new Date(), { outputData: {} }, { via: 'admin' });
      await waitFor(() => got.all.some((e) => e.runId === rb.id && e.status === 'completed'));
      expect(got.b).toHaveLength(1);
      expect(feed.size).toBe(2);
    } finally {
      await feed.close();
    }
  });
});

describe('issue 14: the run feed after idling', () => {
  it('a subscriber after a stretch with none hears changes from its subscription on, not the backlog made meanwhile', async () => {
    const feed = new RunFeed(t.db, t.ctx.log, { pollMs: 60_000 });
    const first: RunChange[] = [];
    const unsubscribe = feed.subscribe({ orgIds: null }, (e) => first.push(e));
    await feed.ready();
    try {
      unsubscribe();
      const now = new Date();
      for (let i = 0; i < 3; i++) await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now });
      const second: RunChange[] = [];
      feed.subscribe({ orgIds: null }, (e) => second.push(e));
      await feed.ready();
      const heard = await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: 'trigger', now: new Date() });
      (feed as unknown as { read(): void }).read(); // the catch-up tick, without waiting 60 s
      await waitFor(() => second.some((e) => e.runId === heard.id));
      expect(second.map((e) => e.runId)).toEqual([heard.id]);
      expect(first).toEqual([]);
    } finally {
      await feed.close();
    }
  });
});

describe.skipIf(!onPostgres)('issue 14: live runs across instances (PostgreSQL)', () => {
  it('a change written by another instance reaches this instance’s stream through NOTIFY', async () => {
    const poll = liveStreamSettings.pollMs;
    // No catch-up within the test: only the NOTIFY of the completion can bring it.
    liveStreamSettings.pollMs = 60_000;
    const first = await createTestApp(withLiveSettings);
    try {
      const url = await listen(first);
      const second = await first.another();
      const a = await seedAgent(first, { runtime: { kind: 'task', baseUrl: trigger.url, apiKey: trigger.secretKey } });
      const s = await Stream.open(`${url}/api/admin/runs/events`);
      await s.until(live);
      const res = await second.app.inject({ method: 'POST', url: `/api/agents/${a.agent.id}/runs/trigger`, headers: a.ingestAuth, payload: { input: {} } });
      const runId = res.json<{ runId: number }>().runId;
      const done = await second.app.inject({ method: 'POST', url: `/api/runs/${runId}/callback`, headers: a.agentAuth, payload: { type: 'output', output: {}, complete: true } });
      expect(done.statusCode).toBe(200);
      // The read the NOTIFY starts also brings the run's earlier `queued` (it had no NOTIFY of its own).
      await s.until(hasEvent(runId, 'completed'), 3_000);
      expect(s.events.filter((e) => e.runId === runId).map((e) => e.status)).toEqual(['completed']);
      s.close();
    } finally {
      liveStreamSettings.pollMs = poll;
      await first.close();
    }
  });
});

async function waitFor(check: () => boolean | Promise<boolean>, ms = 5_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe('issue 35 finding 3: a live stream ends when its right does', () => {
  const admin = { authorization: `Bearer ${ADMIN_TOKEN}` };
  async function personal(userId: string): Promise<{ token: string; id: string }> {
    const res = await t.app.inject({ method: 'POST', url: `/api/admin/users/${userId}/tokens`, headers: admin, payload: {} });
    return { token: res.json().token, id: res.json().id };
  }
  const ended = (s: Stream) => s.ended && s.text.includes('event: end');
  const asUser = (token: string) => ({ authorization: `Bearer ${token}` });

  it('sign-out ends a stream opened with the session cookie (event: end, closed within seconds)', async () => {
    const userId = await seedUser(t, { orgId: agent.orgId });
    const { token } = await personal(userId);
    const signIn = await t.app.inject({ method: 'POST', url: '/api/session', headers: { origin: t.ctx.config.publicUrl }, payload: { token } });
    expect(signIn.statusCode, signIn.body).toBe(201);
    const cookie = String(signIn.headers['set-cookie']).split(';')[0]!;
    const s = await Stream.open(`${base}/api/admin/runs/events`, { authorization: '', cookie });
    expect(s.status, s.body).toBe(200);
    await s.until(live);
    const out = await t.app.inject({ method: 'DELETE', url: '/api/session', headers: { cookie, origin: t.ctx.config.publicUrl } });
    expect(out.statusCode).toBe(204);
    await s.until(ended);
    // Reconnecting is refused.
    expect((await Stream.open(`${base}/api/admin/runs/events`, { authorization: '', cookie })).status).toBe(401);
  });

  it('revoking the personal token ends its stream', async () => {
    const userId = await seedUser(t, { orgId: agent.orgId });
    const { token, id } = await personal(userId);
    const s = await Stream.open(`${base}/api/admin/runs/events`, asUser(token));
    await s.until(live);
    expect((await t.app.inject({ method: 'DELETE', url: `/api/admin/users/${userId}/tokens/${id}`, headers: admin })).statusCode).toBe(204);
    await s.until(ended);
  });

  it('joining an organization re-scopes the stream (event: refetch, then its runs); leaving the last one ends it', async () => {
    const userId = await seedUser(t, { orgId: agent.orgId });
    const { token } = await personal(userId);
    const otherOrg = await seedOrg(t, 'Joined later');
    const other = await seedAgent(t, { orgId: otherOrg });
    const s = await Stream.open(`${base}/api/admin/runs/events`, asUser(token));
    await s.until(live);
    // The feed has read the next run (an admin's stream, open before it, sees it) before the user joins: otherwise a
    // loaded machine can run the membership recheck first, and the run, read later, is then rightly the member's.
    const watcher = await Stream.open(`${base}/api/admin/runs/events`);
    await watcher.until(live);
    const before = await insertRun(t.db, { agentId: other.agent.id, status: 'queued', source: 'trigger', now: new Date() });
    await watcher.until(hasEvent(before.id, 'queued'));
    watcher.close();
    const added = await t.app.inject({ method: 'POST', url: `/api/admin/orgs/${otherOrg}/members`, headers: admin, payload: { user_id: userId, role: 'member' } });
    expect(added.statusCode, added.body).toBe(201);
    await s.until((x) => x.text.includes('event: refetch'));
    const after = await insertRun(t.db, { agentId: other.agent.id, status: 'queued', source: 'trigger', now: new Date() });
    await s.until(hasEvent(after.id, 'queued'));
    expect(s.events.some((e) => e.runId === before.id)).toBe(false);

    for (const org of [agent.orgId, otherOrg]) {
      expect((await t.app.inject({ method: 'DELETE', url: `/api/admin/orgs/${org}/members/${userId}`, headers: admin })).statusCode).toBe(204);
    }
    await s.until(ended);
  });

  it('a user of no organization gets no stream (403); one user holds a bounded number of streams (429)', async () => {
    const loner = await personal(await seedUser(t));
    const refused = await Stream.open(`${base}/api/admin/runs/events`, asUser(loner.token));
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body)).toMatchObject({ code: 'forbidden' });

    const cap = liveStreamSettings.maxStreamsPerUser;
    liveStreamSettings.maxStreamsPerUser = 2;
    const { token } = await personal(await seedUser(t, { orgId: agent.orgId }));
    const open = [await Stream.open(`${base}/api/admin/runs/events`, asUser(token)), await Stream.open(`${base}/api/admin/runs/events`, asUser(token))];
    try {
      expect(open.map((x) => x.status)).toEqual([200, 200]);
      const third = await Stream.open(`${base}/api/admin/runs/events`, asUser(token));
      expect(third.status).toBe(429);
      expect(third.headers.get('retry-after')).toMatch(/^\d+$/);
      // Another user is not counted against this one.
      const { token: other } = await personal(await seedUser(t, { orgId: agent.orgId }));
      const theirs = await Stream.open(`${base}/api/admin/runs/events`, asUser(other));
      expect(theirs.status).toBe(200);
      theirs.close();
      // A stream closed frees its place.
      open[0]!.close();
      await waitFor(async () => {
        const again = await Stream.open(`${base}/api/admin/runs/events`, asUser(token));
        again.close();
        return again.status === 200;
      });
    } finally {
      liveStreamSettings.maxStreamsPerUser = cap;
      for (const x of open) x.close();
    }
  });
});
