// The console at scale: the admin runs list (first page, by agent, by status, both, deep cursors) and the dashboard,
// through the whole app against the bare SQL they need; PASS under 100 ms at p95.
import type { Report } from '../../report.ts';
import { ms } from '../../stats.ts';
import type { Db } from '../../../src/storage/db.ts';
import { LABEL } from './database.ts';
import { ADMIN_TOKEN, type Side } from './side.ts';
import { p50p95 } from './targets.ts';

const ITERATIONS = 100;

const WARMUP = 10;

const TARGET_MS = 100;

/** A runs-list or dashboard figure stops after this long once it has MIN_ITERATIONS samples. */
const FIGURE_BUDGET_MS = 60_000;

const MIN_ITERATIONS = 20;

const DAY_MS = 86_400_000;

export async function consoleFigures(r: Report, s: Side): Promise<void> {
  const { app, db } = s;
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res.json<{ next_cursor?: string | null }>();
  };
  // The bound is looked up first: as a subquery the planner cannot see it and may read every run (past the pool's
  // statement timeout, seen at 10M).
  const newest = (await db.query<{ id: string }>('SELECT max(id) AS id FROM runs')).rows[0]!.id;
  const { rows } = await db.query<{ agent_id: number }>(
    'SELECT agent_id FROM runs WHERE id > $1::bigint - 10000 GROUP BY 1 ORDER BY count(*) DESC LIMIT 1', [newest],
  );
  const busiest = rows[0]!.agent_id;
  const orgId = (await db.query<{ org_id: string }>('SELECT org_id FROM agents WHERE id = $1', [busiest])).rows[0]!.org_id;
  const deep = async (filter: string) => {
    let cursor = '';
    for (let i = 0; i < 20; i++) cursor = (await get(`/api/admin/runs?limit=50${filter}${cursor ? `&cursor=${cursor}` : ''}`)).next_cursor!;
    return { cursor, id: Number(Buffer.from(cursor, 'base64url').toString('utf8').split(':')[1]) };
  };
  const all = await deep('');
  const agentDeep = await deep(`&agent_id=${busiest}`);
  const now = Date.now();
  const iso = (at: number) => new Date(at).toISOString();
  const page = (where: string, params: unknown[]) => () => db.query(`SELECT * FROM runs ${where} ORDER BY id DESC LIMIT 51`, params);

  await figure(r, 'runs page: first (50, newest first)', () => get('/api/admin/runs?limit=50'), page('', []));
  await figure(r, 'runs page: busiest agent', () => get(`/api/admin/runs?limit=50&agent_id=${busiest}`), page('WHERE agent_id = $1', [busiest]));
  await figure(r, 'runs page: status failed', () => get('/api/admin/runs?limit=50&status=failed'), page('WHERE status = $1', ['failed']));
  await figure(r, 'runs page: status waiting (rare)', () => get('/api/admin/runs?limit=50&status=waiting'), page('WHERE status = $1', ['waiting']));
  await figure(r, 'runs page: busiest agent + status failed', () => get(`/api/admin/runs?limit=50&agent_id=${busiest}&status=failed`),
    page('WHERE agent_id = $1 AND status = $2', [busiest, 'failed']));
  await figure(r, 'runs page: 20 cursors deep', () => get(`/api/admin/runs?limit=50&cursor=${all.cursor}`), page('WHERE id < $1', [all.id]));
  await figure(r, 'runs page: busiest agent, 20 cursors deep', () => get(`/api/admin/runs?limit=50&agent_id=${busiest}&cursor=${agentDeep.cursor}`),
    page('WHERE agent_id = $1 AND id < $2', [busiest, agentDeep.id]));
  // The raw aggregate is the slow path the rollup replaced: measured on every 5th iteration only.
  await figure(r, 'dashboard: 30 days (baseline: raw aggregate)', () => get('/api/admin/dashboard'), () => rawDashboard(db, now - 30 * DAY_MS, now), 5);
  await figure(r, 'dashboard: 90 days (baseline: raw aggregate)', () => get(`/api/admin/dashboard?from=${iso(now - 90 * DAY_MS)}&to=${iso(now)}`),
    () => rawDashboard(db, now - 90 * DAY_MS, now), 5);
  await figure(r, 'dashboard: 30 days, one organization', () => get(`/api/admin/dashboard?org_id=${orgId}`), () => rawDashboard(db, now - 30 * DAY_MS, now, orgId), 5);
  // What the dashboard answers grows with days plus agents.
  for (const days of [30, 90]) {
    const res = await app.inject({ method: 'GET', url: `/api/admin/dashboard?from=${iso(now - days * DAY_MS)}&to=${iso(now)}`, headers });
    const body = res.json<{ runs_by_status: unknown[]; outputs_by_day: unknown[]; by_agent: unknown[] }>();
    const n = (a: unknown[]) => a.length.toLocaleString('en-US');
    r.note(`${LABEL} runs — dashboard, ${days} days: ${n(body.runs_by_status)} runs_by_status, ${n(body.outputs_by_day)} outputs_by_day and ${n(body.by_agent)} by_agent entries, ${(res.rawPayload.length / 1024).toFixed(0)} KiB of JSON`);
  }
}

/**
 * The dashboard's aggregate read straight from runs, without the rollup: what the dashboard would cost without it
 * (its baseline).
 */
async function rawDashboard(db: Db, from: number, to: number, orgId?: string): Promise<unknown> {
  return db.query(
    `SELECT to_char(d, 'YYYY-MM-DD') AS day, status, agent_id, count(*) AS runs, coalesce(sum(outputs), 0) AS outputs
     FROM (SELECT (created_at AT TIME ZONE 'UTC')::date AS d, agent_id, status, outputs FROM runs
           WHERE created_at >= $1 AND created_at < $2 AND ($3::uuid IS NULL OR agent_id IN (SELECT id FROM agents WHERE org_id = $3))) r
     GROUP BY GROUPING SETS ((d, status), (agent_id))`,
    [new Date(from), new Date(to), orgId ?? null],
  );
}

/** p50/p95 of the route and of its baseline, alternating so drift hits both alike; PASS when the route's p95 < 100 ms. */
async function figure(r: Report, name: string, service: () => Promise<unknown>, baseline: () => Promise<unknown>, baselineEvery = 1): Promise<void> {
  const s: number[] = [];
  const b: number[] = [];
  const start = performance.now();
  const until = start + FIGURE_BUDGET_MS;
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    if (i < WARMUP && performance.now() > start + 10_000) i = WARMUP; // a slow figure warms up in 10 s
    // A figure far over its target (the dashboard at thousands of agents) stops at its time budget.
    if (s.length >= MIN_ITERATIONS && performance.now() > until) break;
    const t0 = performance.now();
    await service();
    const t1 = performance.now();
    if (i >= WARMUP) s.push(t1 - t0);
    if (i % baselineEvery === 0 && (i >= WARMUP || baselineEvery === 1)) {
      const t2 = performance.now();
      await baseline();
      if (i >= WARMUP) b.push(performance.now() - t2);
    }
  }
  const [sp, bp] = [p50p95(s), p50p95(b)];
  r.add({
    name: `${LABEL} runs — ${name}${s.length < ITERATIONS ? ` (${s.length} requests: time budget)` : ''}`,
    service: `p50 ${ms(sp.p50, 1)}, p95 ${ms(sp.p95, 1)}`,
    baseline: `p50 ${ms(bp.p50, 1)}, p95 ${ms(bp.p95, 1)}`,
    ratio: `${(sp.p95 / bp.p95).toFixed(2)}×`,
    target: `p95 < ${TARGET_MS} ms`,
    verdict: sp.p95 < TARGET_MS ? 'PASS' : 'MISS',
  });
}
