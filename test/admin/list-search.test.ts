// Issue 40 item 1: one paging and search mechanism for every admin list, in a world of real size. 20,000 agents
// (the scale scenario's count), searched by name with `q` and paged completely with the keyset cursors; the audit
// log and the review queue (GET /runs?status=waiting) paged past their old caps; `ids` names any page of runs' agents;
// a search never reaches past the caller's organizations; hostile `q` values are a 400 or literal text, never a 500.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedOrg, seedUser } from '../helpers/fixtures.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { appendAudit } from '../../src/orgs/audit-repo.ts';
import { expectInvalid, type Json } from './admin-helpers.ts';

const AGENTS = 20_000;
/** Every tenth agent of org One is a "Billing" agent: 1,900 matches for a search, spread over the whole id range. */
const nameSql = `CASE WHEN i % 10 = 0 THEN 'Billing sync ' || i ELSE 'Worker ' || i END`;

let t: TestApp;
let one: string; // 19,000 agents
let two: string; // 1,000 agents, one of them named like org One's literal-text agents
const tokens = { admin: ADMIN_TOKEN, member: '' };

/**
 * Agents straight through SQL, thousands per statement: the lists read no secret, so the digests are distinct
 * placeholders (sha256 of the row number) and the sealed columns hold text no caller ever opens.
 */
async function bulkAgents(orgId: string, from: number, to: number, name: string, params: unknown[] = []): Promise<void> {
  const tag = randomUUID();
  await t.db.query(
    `INSERT INTO agents (org_id, name, managed_by, ingest_key_digest, agent_key_digest, agent_key_enc, zone_secret_enc, credentials_secret_enc)
     SELECT $1::uuid, ${name}, 'standalone', sha256(($4 || ' ingest ' || i)::bytea), sha256(($4 || ' agent ' || i)::bytea), 'unused', 'unused', 'unused'
     FROM generate_series($2::int, $3::int) AS i ORDER BY i`,
    [orgId, from, to, tag, ...params],
  );
}

/** The ids of an organization's agents, oldest first. */
async function agentIds(orgId: string): Promise<number[]> {
  const { rows } = await t.db.query<{ id: string }>('SELECT id FROM agents WHERE org_id = $1 ORDER BY id', [orgId]);
  return rows.map((r) => Number(r.id));
}

async function personalToken(userId: string): Promise<string> {
  const res = await t.app.inject({ method: 'POST', url: `/api/admin/users/${userId}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
  return res.json().token;
}

const get = (url: string, who: keyof typeof tokens = 'admin') =>
  t.app.inject({ method: 'GET', url: `/api/admin${url}`, headers: { authorization: `Bearer ${tokens[who]}` } });

async function page(url: string, who: keyof typeof tokens = 'admin'): Promise<Json> {
  const res = await get(url, who);
  if (res.statusCode !== 200) throw new Error(`GET ${url} answered ${res.statusCode}: ${res.body}`);
  return res.json();
}

/** Every item of a list, following next_cursor to the end; `between` runs after each page (rows arriving meanwhile). */
async function walk(url: string, who: keyof typeof tokens = 'admin', between: () => Promise<void> = async () => {}): Promise<Json[]> {
  const items: Json[] = [];
  let cursor: string | null = null;
  do {
    const sep = url.includes('?') ? '&' : '?';
    const p = await page(`${url}${cursor ? `${sep}cursor=${encodeURIComponent(cursor)}` : ''}`, who);
    items.push(...p.data);
    cursor = p.next_cursor;
    await between();
  } while (cursor !== null);
  return items;
}

const idsOf = (items: Json[]) => items.map((x) => x.id as number);

beforeAll(async () => {
  t = await createTestApp();
  one = await seedOrg(t, 'One Logistics');
  two = await seedOrg(t, 'Two Percent');
  await bulkAgents(one, 1, AGENTS - 1_000, nameSql);
  await bulkAgents(two, AGENTS - 999, AGENTS, `'Other ' || i`);
  // Names holding what LIKE would read as wildcards or escapes, in org One, and one look-alike in org Two.
  for (const [orgId, name] of [[one, '100% done'], [one, 'under_score'], [one, 'back\\slash'], [one, 'plain 100 done'], [one, 'underXscore'], [two, '100% secret']] as const) {
    await bulkAgents(orgId, 1, 1, '$5::text', [name]);
  }
  tokens.member = await personalToken(await seedUser(t, { orgId: one }));
}, 120_000);
afterAll(() => t?.close());

describe('issue 40 item 1: agent search at 20,000 agents', () => {
  it('a search pages completely with cursors: every match once, newest first, exactly what the table holds', async () => {
    const found = await walk(`/agents?q=billing&limit=200`);
    const { rows } = await t.db.query<{ id: number }>(`SELECT id FROM agents WHERE name LIKE 'Billing sync %' ORDER BY id DESC`);
    expect(found.length).toBe(1_900);
    expect(idsOf(found)).toEqual(rows.map((r) => Number(r.id)));
    expect(found.every((a) => a.name.startsWith('Billing sync '))).toBe(true);
  });

  it('the order holds while agents are created mid-walk: no duplicate, no gap, the new ones come first next time', async () => {
    let added = 0;
    const addOne = async () => {
      added += 1;
      await bulkAgents(one, 100_000 + added, 100_000 + added, `'Billing late ' || i`);
    };
    const found = await walk(`/agents?q=BILLING&org_id=${one}&limit=150`, 'admin', addOne);
    expect(added).toBeGreaterThan(10);
    // Keyset cursors: a page after the first never shows an agent newer than its cursor, so the walk is the
    // 1,900 that existed when it began, each once, and no row shifts into or out of a later page.
    expect(new Set(idsOf(found)).size).toBe(found.length);
    expect(found.length).toBe(1_900);
    const fresh = await page(`/agents?q=billing late&limit=200`);
    expect(fresh.data.length).toBe(added);
  });

  it('combines with the other filters and the limit as every list does', async () => {
    // 'Worker 1899' and 'Worker 18991' to 'Worker 18999' (18990 is a Billing agent), newest first.
    const p = await page(`/agents?q=WORKER 1899&org_id=${one}&managed_by=standalone&limit=5`);
    expect(p.data.map((a: Json) => a.name)).toEqual(['Worker 18999', 'Worker 18998', 'Worker 18997', 'Worker 18996', 'Worker 18995']);
    expect(p.next_cursor).not.toBeNull();
    expect((await page(`/agents?q=worker&managed_by=platform`)).data).toEqual([]);
  });

  it('`%`, `_` and `\\` are literal text, not wildcards', async () => {
    const names = async (q: string) => (await page(`/agents?org_id=${one}&q=${encodeURIComponent(q)}`)).data.map((a: Json) => a.name);
    expect(await names('%')).toEqual(['100% done']);
    expect(await names('0% d')).toEqual(['100% done']);
    expect(await names('_')).toEqual(['under_score']);
    expect(await names('\\')).toEqual(['back\\slash']);
    expect(await names('%%')).toEqual([]);
  });

  it('hostile q: too long, empty or holding NUL is a 400 naming q; odd bytes are text; nothing is a 500', async () => {
    expectInvalid(await get(`/agents?q=${'a'.repeat(321)}`), 'q');
    expectInvalid(await get('/agents?q='), 'q');
    expectInvalid(await get('/agents?q=a%00b'), 'q');
    expect((await page(`/agents?q=${'a'.repeat(320)}`)).data).toEqual([]);
    for (const q of ['%FF%FE', '%ED%A0%80', "'; DROP TABLE agents; --", '%E2%80%AE', '%5C%25%5F', '%0A%0D%09']) {
      const res = await get(`/agents?q=${q}`);
      expect(res.statusCode, `q=${q}: ${res.body}`).toBe(200);
    }
    expect((await page('/agents?q=Worker 1&limit=1')).data).toHaveLength(1);
  });
});

describe('issue 40 item 1: ids names the agents of any page of runs', () => {
  it('answers exactly the listed agents, the oldest among them too, however many agents exist', async () => {
    const [ofOne, ofTwo] = [await agentIds(one), await agentIds(two)];
    const ids = [ofOne[0]!, ofOne[1]!, ofOne[9_000]!, ofOne[18_999]!, ofTwo[0]!];
    const p = await page(`/agents?ids=${ids.join(',')}`);
    expect(idsOf(p.data).sort((a, b) => a - b)).toEqual(ids);
    expect(p.data.find((a: Json) => a.id === ofOne[0]).name).toBe('Worker 1');
    expect(p.next_cursor).toBeNull();
  });

  it('at most 200 ids, digits only: anything else is a 400 naming ids', async () => {
    const many = Array.from({ length: 200 }, (_, i) => i + 1);
    expect((await page(`/agents?ids=${many.join(',')}&limit=200`)).data).toHaveLength(200);
    expectInvalid(await get(`/agents?ids=${[...many, 201].join(',')}`), 'ids');
    for (const bad of ['', '1,,2', '1,a', '-1', '1,2,', '1%2C2%00']) expectInvalid(await get(`/agents?ids=${bad}`), 'ids');
  });

  it('a member asking for another organization’s agents by id gets only its own', async () => {
    const [mine, theirs] = [(await agentIds(one))[0]!, (await agentIds(two))[0]!];
    const p = await page(`/agents?ids=${mine},${theirs}`, 'member');
    expect(idsOf(p.data)).toEqual([mine]);
  });
});

describe('issue 40 item 1: search never leaks another organization’s rows', () => {
  it('a member’s agent search covers only its organization, even when the name exists elsewhere', async () => {
    expect((await page(`/agents?q=${encodeURIComponent('100%')}`, 'member')).data.map((a: Json) => a.name)).toEqual(['100% done']);
    expect((await page(`/agents?q=${encodeURIComponent('100%')}`)).data.map((a: Json) => a.name).sort()).toEqual(['100% done', '100% secret']);
    expect((await page('/agents?q=Other', 'member')).data).toEqual([]);
    expect((await page(`/agents?q=Other&org_id=${two}`, 'member')).data).toEqual([]);
    const all = await walk('/agents?q=billing&limit=200', 'member');
    const { rows } = await t.db.query<{ id: string }>(`SELECT id FROM agents WHERE org_id = $1 AND name LIKE 'Billing %' ORDER BY id DESC`, [one]);
    expect(idsOf(all)).toEqual(rows.map((r) => Number(r.id)));
    expect(all.every((a) => a.org_id === one)).toBe(true);
  });

  it('organizations, users and runtimes: searched by name (users also by email), within what the caller may list', async () => {
    const [stranger, colleague] = [await seedUser(t, { orgId: two }), await seedUser(t, { orgId: one })];
    await t.db.query(`UPDATE users SET name = 'Zed Stranger', email = 'zed@two.example' WHERE id = $1`, [stranger]);
    await t.db.query(`UPDATE users SET name = 'Zed Colleague', email = 'colleague@one.example' WHERE id = $1`, [colleague]);
    await t.db.query(`INSERT INTO runtimes (org_id, name, kind, base_url) VALUES ($1, 'Prod n8n', 'workflow', 'https://a.example'), ($2, 'Prod secret n8n', 'workflow', 'https://b.example')`, [one, two]);

    expect((await page('/orgs?q=percent')).data.map((o: Json) => o.id)).toEqual([two]);
    expect((await page('/orgs?q=percent', 'member')).data).toEqual([]);
    expect((await page('/orgs?q=o', 'member')).data.map((o: Json) => o.id)).toEqual([one]);

    // Users are for platform admins only (access.ts): a search is refused to a member like the list is.
    expect((await page('/users?q=ZED')).data.map((u: Json) => u.id).sort()).toEqual([stranger, colleague].sort());
    expect((await page('/users?q=two.EXAMPLE')).data.map((u: Json) => u.id)).toEqual([stranger]);
    expect((await page(`/users?q=zed&org_id=${one}`)).data.map((u: Json) => u.id)).toEqual([colleague]);
    expect((await get('/users?q=zed', 'member')).statusCode).toBe(403);

    expect((await page('/runtimes?q=prod')).data.map((r: Json) => r.name)).toEqual(['Prod secret n8n', 'Prod n8n']);
    expect((await page('/runtimes?q=prod', 'member')).data.map((r: Json) => r.name)).toEqual(['Prod n8n']);
    expect((await page('/runtimes?q=secret', 'member')).data).toEqual([]);
    for (const list of ['orgs', 'users', 'runtimes']) expectInvalid(await get(`/${list}?q=%00`), 'q');
  });
});

describe('issue 40 item 1: the audit log pages with a cursor', () => {
  it('260 entries page completely (newest first, each once); a member pages only its organization’s entries', async () => {
    const before = (await t.db.query<{ n: string }>('SELECT count(*)::text AS n FROM audit_log')).rows[0]!.n;
    const now = new Date();
    const [mine, theirs] = [(await agentIds(one))[0]!, (await agentIds(two))[0]!];
    for (let i = 0; i < 260; i += 1) {
      await appendAudit(t.db, { action: 'test.paged', agentId: i % 2 === 0 ? mine : theirs, details: { i } }, now);
    }
    const all = await walk('/audit?limit=100');
    expect(all.length).toBe(Number(before) + 260);
    expect(idsOf(all)).toEqual([...idsOf(all)].sort((a, b) => b - a));
    expect(new Set(idsOf(all)).size).toBe(all.length);

    const paged = await walk('/audit?action=test.paged&limit=7');
    expect(paged.map((e) => e.details.i)).toEqual(Array.from({ length: 260 }, (_, i) => 259 - i));

    const memberSees = await walk('/audit?action=test.paged&limit=50', 'member');
    expect(memberSees.length).toBe(130);
    expect(memberSees.every((e) => e.agent_id === mine)).toBe(true);
  });

  it('a cursor from another list, or made up, is a 400 naming cursor', async () => {
    const agentsCursor = (await page('/agents?limit=1')).next_cursor;
    expectInvalid(await get(`/audit?cursor=${agentsCursor}`), 'cursor');
    expectInvalid(await get('/audit?cursor=bm9wZQ'), 'cursor');
    expectInvalid(await get('/audit?limit=201'), 'limit');
  });
});

describe('issue 40 item 1: the review queue (GET /runs?status=waiting) pages past 50', () => {
  it('every waiting run once, newest first, across pages, and ids names each page’s agents', async () => {
    const now = t.ctx.clock.now();
    const waiting: number[] = [];
    const ofOne = await agentIds(one);
    for (let i = 0; i < 130; i += 1) {
      const agentId = ofOne[(i * 137) % ofOne.length]!;
      const run = await insertRun(t.db, { agentId, status: 'waiting', source: 'trigger', now });
      await insertRun(t.db, { agentId, status: 'completed', source: 'trigger', now });
      if ('id' in run) waiting.push(Number(run.id));
    }
    const runs: Json[] = [];
    let cursor: string | null = null;
    do {
      const p: Json = await page(`/runs?status=waiting&limit=50${cursor ? `&cursor=${cursor}` : ''}`);
      runs.push(...p.data);
      // What the console does to name a page's agents: one bounded request, whatever the number of agents.
      const agentIds: number[] = [...new Set<number>(p.data.map((r: Json) => r.agentId as number))];
      const named = await page(`/agents?ids=${agentIds.join(',')}&limit=200`);
      expect(idsOf(named.data).sort((a, b) => a - b)).toEqual([...agentIds].sort((a, b) => a - b));
      cursor = p.next_cursor;
    } while (cursor !== null);
    expect(runs.map((r) => r.runId)).toEqual([...waiting].reverse());
  });
});
