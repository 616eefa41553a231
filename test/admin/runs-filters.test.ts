// Issue 14: the console's filters on GET /api/admin/runs — source, created range, external id and creator — with
// the same validation and paging as agent_id and status.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { call, expectInvalid, ok } from './admin-helpers.ts';

let t: TestApp;
let agent: SeededAgent;
let userId: string;
const ids: Record<string, number> = {};

beforeAll(async () => {
  t = await createTestApp();
  agent = await seedAgent(t);
  userId = await seedUser(t);
  const run = async (key: string, at: string, o: { source?: string; externalRunId?: string; createdBy?: string } = {}) => {
    ids[key] = (await insertRun(t.db, { agentId: agent.agent.id, status: 'queued', source: o.source ?? 'trigger', now: new Date(at), externalRunId: o.externalRunId, createdBy: o.createdBy })).id;
  };
  await run('early', '2026-01-01T10:00:00Z');
  await run('ingested', '2026-01-02T10:00:00Z', { source: 'ingest', externalRunId: 'ext-42' });
  await run('zone', '2026-01-03T10:00:00Z', { source: 'zone', createdBy: userId });
  await run('late', '2026-01-04T10:00:00Z');
});
afterAll(() => t.close());

const listed = async (query: string): Promise<number[]> => (await ok(t, 200, 'GET', `/runs?${query}`)).data.map((r: { runId: number }) => r.runId);

describe('GET /api/admin/runs filters (issue 14)', () => {
  it('source, external_run_id and created_by select their runs, newest first', async () => {
    expect(await listed('source=trigger')).toEqual([ids.late, ids.early]);
    expect(await listed('external_run_id=ext-42')).toEqual([ids.ingested]);
    expect(await listed(`created_by=${userId.toUpperCase()}`)).toEqual([ids.zone]);
    expect(await listed('external_run_id=nope')).toEqual([]);
  });

  it('created_from is inclusive, created_to exclusive; they combine with the others and page', async () => {
    expect(await listed('created_from=2026-01-02T10:00:00Z&created_to=2026-01-04T10:00:00Z')).toEqual([ids.zone, ids.ingested]);
    expect(await listed('created_from=2026-01-02T11:00:00%2B01:00&source=ingest')).toEqual([ids.ingested]);
    const first = await ok(t, 200, 'GET', '/runs?created_to=2026-01-04T00:00:00Z&limit=2');
    expect(first.data.map((r: { runId: number }) => r.runId)).toEqual([ids.zone, ids.ingested]);
    expect(await listed(`created_to=2026-01-04T00:00:00Z&limit=2&cursor=${first.next_cursor}`)).toEqual([ids.early]);
  });

  it("one agent's runs come newest first whatever their statuses, and page (read per status, merged: migration 0016)", async () => {
    const other = await seedAgent(t);
    const statuses = ['completed', 'queued', 'failed', 'running', 'completed', 'cancelled', 'waiting', 'failed'] as const;
    const made: number[] = [];
    for (const [i, status] of statuses.entries()) {
      const id = (await insertRun(t.db, { agentId: other.agent.id, status: 'queued', source: 'trigger', now: new Date(Date.UTC(2026, 1, 1, i)) })).id;
      await t.db.query('UPDATE runs SET status = $2 WHERE id = $1', [id, status]);
      made.push(id);
    }
    const newestFirst = [...made].reverse();
    const pages: number[][] = [];
    let cursor = '';
    do {
      const page = await ok(t, 200, 'GET', `/runs?agent_id=${other.agent.id}&limit=3${cursor && `&cursor=${cursor}`}`);
      pages.push(page.data.map((r: { runId: number }) => r.runId));
      cursor = page.next_cursor ?? '';
    } while (cursor);
    expect(pages).toEqual([newestFirst.slice(0, 3), newestFirst.slice(3, 6), newestFirst.slice(6)]);
    expect(await listed(`agent_id=${other.agent.id}&status=failed`)).toEqual([made[7], made[2]]);
    expect(await listed(`agent_id=${other.agent.id}&created_from=2026-02-01T05:00:00Z&limit=50`)).toEqual(newestFirst.slice(0, 3));
  });

  it('a malformed filter is 400 naming it', async () => {
    expectInvalid(await call(t, 'GET', '/runs?created_from=yesterday'), 'querystring.created_from');
    expectInvalid(await call(t, 'GET', '/runs?created_to=2026-01-01'), 'querystring.created_to');
    expectInvalid(await call(t, 'GET', '/runs?created_by=not-a-uuid'), 'created_by');
    expectInvalid(await call(t, 'GET', '/runs?source=Trigger!'), 'source');
  });
});
