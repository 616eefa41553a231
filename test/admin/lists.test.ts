// Issue 14 (the console): GET /agents, /orgs, /users and /runtimes → {data, next_cursor}, newest first, paged with
// limit and an opaque cursor exactly as GET /runs (admin-api.md "Runs and audit"), each item as its GET-one shows it.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { ManualClock } from '../../src/lib/clock.ts';
import { seedOrg, seedUser } from '../helpers/fixtures.ts';
import { call, expectInvalid, newAgent, newOrg, newRuntime, ok, type Json } from './admin-helpers.ts';

const clock = new ManualClock(new Date('2026-03-01T10:00:00.000Z'));
let t: TestApp;
beforeAll(async () => {
  t = await createTestApp({ clock });
});
afterAll(() => t.close());

/** Every item of a list, page by page with `limit`, and the number of pages it took. */
async function walk(url: string, limit: number): Promise<{ items: Json[]; pages: number }> {
  const items: Json[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const page: Json = await ok(t, 200, 'GET', `${url}${sep}limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`);
    items.push(...page.data);
    cursor = page.next_cursor;
    pages += 1;
  } while (cursor !== null && pages < 50);
  return { items, pages };
}

describe('GET /agents', () => {
  it('issue 14: newest first, each item equal to GET /agents/{id} (no secrets, only _set flags)', async () => {
    const orgId = await newOrg(t);
    const runtimeId = await newRuntime(t, orgId);
    const first = await newAgent(t, { org_id: orgId, runtime_id: runtimeId });
    const second = await newAgent(t, { org_id: orgId, runtime_id: runtimeId, allow_webhook_triggers: true });
    const body = await ok(t, 200, 'GET', `/agents?org_id=${orgId}`);
    expect(body.next_cursor).toBeNull();
    expect(body.data.map((a: Json) => a.id)).toEqual([second.id, first.id]);
    for (const item of body.data) expect(item).toEqual(await ok(t, 200, 'GET', `/agents/${item.id}`));
    expect(body.data[0]).toMatchObject({ webhook_token_set: true, ingest_api_key_set: true });
    expect(JSON.stringify(body)).not.toContain(second.ingest_api_key);
    expect(JSON.stringify(body)).not.toContain(second.webhook_token);
  });

  it('issue 14: filters by org_id, runtime_id, managed_by and status', async () => {
    const orgId = await newOrg(t);
    const [rtA, rtB] = [await newRuntime(t, orgId), await newRuntime(t, orgId)];
    const onA = await newAgent(t, { org_id: orgId, runtime_id: rtA });
    const onB = await newAgent(t, { org_id: orgId, runtime_id: rtB, status: 'paused' });
    const standalone = await newAgent(t, { org_id: orgId, runtime_id: null, target: null, managed_by: 'standalone' });
    const ids = async (q: string) => (await ok(t, 200, 'GET', `/agents?org_id=${orgId}&${q}`)).data.map((a: Json) => a.id);
    expect(await ids(`runtime_id=${rtA}`)).toEqual([onA.id]);
    expect(await ids('managed_by=standalone')).toEqual([standalone.id]);
    expect(await ids('status=paused')).toEqual([onB.id]);
    expect(await ids('status=archived')).toEqual([]);
    // A filter naming nothing is an empty page, not a 404.
    expect((await ok(t, 200, 'GET', `/agents?org_id=${await seedOrg(t)}`)).data).toEqual([]);
  });

  it('admin-api.md paging: limit pages with an opaque next_cursor until null, every agent once, newest first', async () => {
    const orgId = await newOrg(t);
    const runtimeId = await newRuntime(t, orgId);
    const created: number[] = [];
    for (let i = 0; i < 5; i += 1) created.push((await newAgent(t, { org_id: orgId, runtime_id: runtimeId })).id);
    const { items, pages } = await walk(`/agents?org_id=${orgId}`, 2);
    expect(items.map((a) => a.id)).toEqual([...created].reverse());
    expect(pages).toBe(3);
  });
});

describe('GET /runtimes', () => {
  it('issue 14: newest first, filtered by org_id and kind, each item equal to GET /runtimes/{id}', async () => {
    const orgId = await newOrg(t);
    const workflow = await newRuntime(t, orgId, { api_key: 'n8n-key-secret-value' });
    const task = await newRuntime(t, orgId, { kind: 'task', base_url: 'https://api.trigger.example.test' });
    const all = await ok(t, 200, 'GET', `/runtimes?org_id=${orgId}`);
    expect(all.data.map((r: Json) => r.id)).toEqual([task, workflow]);
    for (const item of all.data) expect(item).toEqual(await ok(t, 200, 'GET', `/runtimes/${item.id}`));
    expect(all.data[1].api_key_set).toBe(true);
    expect(JSON.stringify(all)).not.toContain('n8n-key-secret-value');
    expect((await ok(t, 200, 'GET', `/runtimes?org_id=${orgId}&kind=task`)).data.map((r: Json) => r.id)).toEqual([task]);
    expect((await walk(`/runtimes?org_id=${orgId}`, 1)).items.map((r) => r.id)).toEqual([task, workflow]);
  });
});

describe('GET /orgs', () => {
  it('issue 14: newest first by creation (uuids are random), each item equal to GET /orgs/{id}; ties page by id', async () => {
    clock.advance(60_000);
    const older = await newOrg(t, 'Older');
    clock.advance(1000);
    // Three created at the same instant: the cursor must still visit each once.
    const same = [await newOrg(t, 'Same 1'), await newOrg(t, 'Same 2'), await newOrg(t, 'Same 3')];
    const { items } = await walk('/orgs', 2);
    expect(new Set(items.map((o) => o.id)).size).toBe(items.length);
    // Other tests' organizations are in the list too (seeded ones at the real time): only ours are compared.
    const ours = items.filter((o) => [older, ...same].includes(o.id));
    expect(ours.slice(0, 3).map((o) => o.id).sort()).toEqual([...same].sort());
    expect(ours[3]!.id).toBe(older);
    for (const item of ours) expect(item).toEqual(await ok(t, 200, 'GET', `/orgs/${item.id}`));
  });

  it('issue 14: rows written with microsecond timestamps (straight SQL) page exactly too', async () => {
    const seeded = [await seedOrg(t, 'µs 1'), await seedOrg(t, 'µs 2'), await seedOrg(t, 'µs 3')];
    const { items } = await walk('/orgs', 1);
    const ids = items.map((o) => o.id);
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of seeded) expect(ids).toContain(id);
  });
});

describe('GET /users', () => {
  it("issue 14: org_id lists the organization's members, each item equal to GET /users/{id}", async () => {
    const orgId = await newOrg(t);
    const other = await newOrg(t);
    clock.advance(1000);
    const a = (await ok(t, 201, 'POST', '/users', { email: 'a@example.test', name: 'A' })).id;
    clock.advance(1000);
    const b = (await ok(t, 201, 'POST', '/users', { email: 'b@example.test' })).id;
    await seedUser(t, { orgId: other });
    for (const userId of [a, b]) await ok(t, 201, 'POST', `/orgs/${orgId}/members`, { user_id: userId });
    const members = await ok(t, 200, 'GET', `/users?org_id=${orgId}`);
    expect(members).toEqual({ data: [await ok(t, 200, 'GET', `/users/${b}`), await ok(t, 200, 'GET', `/users/${a}`)], next_cursor: null });
    expect((await walk(`/users?org_id=${orgId}`, 1)).items.map((u) => u.id)).toEqual([b, a]);
    const everyone = (await walk('/users', 200)).items.map((u) => u.id);
    expect(everyone).toEqual(expect.arrayContaining([a, b]));
  });
});

describe('bad input is a 400 naming the parameter; no token is a 401', () => {
  it('admin-api.md: limit outside 1-200, a cursor of another list or none at all, a malformed org_id', async () => {
    expectInvalid(await call(t, 'GET', '/agents?limit=0'), 'querystring.limit');
    expectInvalid(await call(t, 'GET', '/orgs?limit=201'), 'querystring.limit');
    expectInvalid(await call(t, 'GET', '/users?limit=abc'), 'querystring.limit');
    const runsCursor = Buffer.from('runs:5').toString('base64url');
    expectInvalid(await call(t, 'GET', `/agents?cursor=${runsCursor}`), 'querystring.cursor');
    expectInvalid(await call(t, 'GET', '/orgs?cursor=bm9wZQ'), 'querystring.cursor');
    expectInvalid(await call(t, 'GET', `/users?cursor=${runsCursor}`), 'querystring.cursor');
    expectInvalid(await call(t, 'GET', '/runtimes?org_id=not-a-uuid'), 'querystring.org_id');
    expectInvalid(await call(t, 'GET', '/agents?runtime_id=x'), 'querystring.runtime_id');
    expectInvalid(await call(t, 'GET', '/agents?status=deleted'), 'querystring.status');
  });

  it('admin-api.md: every list needs the admin token', async () => {
    for (const url of ['/agents', '/orgs', '/users', '/runtimes']) {
      expect((await call(t, 'GET', url, undefined, {})).statusCode).toBe(401);
      expect((await call(t, 'GET', url, undefined, { authorization: 'Bearer wrong-token-wrong-token-wrong-token' })).statusCode).toBe(401);
    }
  });
});
