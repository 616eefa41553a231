// Issue 14 "Fast with real data": the console's runs list and dashboard at one million runs. PostgreSQL only: a
// database of its own (ars_bench_console_1m on the bench's or the tests' server), seeded once through SQL and kept,
// so later runs skip the seeding. The service side is the admin route through the whole app (app.inject, in this
// process: no network, so the figure is the server's own time); the baseline is the bare SQL the route needs,
// or, for the dashboard, the raw aggregate it used before the rollup.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Harness } from '../harness.ts';
import type { Report } from '../report.ts';
import { ms } from '../stats.ts';
import { buildApp } from '../../src/app.ts';
import { loadConfig } from '../../src/config.ts';
import { createContext, stopContext } from '../../src/context.ts';
import { singleKeyring } from '../../src/lib/secrets.ts';
import { openPostgres } from '../../src/storage/postgres-db.ts';
import { migrate } from '../../src/storage/migrate.ts';
import { aggregateRunsByDay } from '../../src/runs/run-aggregates.ts';
import { refreshRollup } from '../../src/runs/run-rollup.ts';
import type { Db } from '../../src/storage/db.ts';

const DB_NAME = 'ars_bench_console_1m';
const RUNS = 1_000_000;
const AGENTS = 12; // 3 organizations of 4
const DAYS = 90;
const ITERATIONS = 100;
const WARMUP = 10;
const TARGET_MS = 100;
const ADMIN_TOKEN = randomBytes(24).toString('hex');
const DAY_MS = 86_400_000;

export async function console1m(_h: Harness, r: Report): Promise<void> {
  const name = 'console at 1M runs';
  const server = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
  if (!server) return r.skipped(name, 'PostgreSQL only: set BENCH_DATABASE_URL or TEST_DATABASE_URL', `p95 < ${TARGET_MS} ms`);
  const url = await ensureDatabase(server);
  const db = await openPostgres(url, { poolSize: 10 });
  try {
    await migrate(db);
    const seeded = await seed(db);
    r.note(`console at 1M runs: ${seeded}`);
    const t0 = performance.now();
    await refreshRollup(db, new Date());
    r.note(`console at 1M runs: dashboard rollup refresh (the sweep's pass) took ${ms(performance.now() - t0, 0)}`);
    await measureAll(db, r);
  } finally {
    await db.close();
  }
}

async function ensureDatabase(server: string): Promise<string> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [DB_NAME]);
    if (!rowCount) await client.query(`CREATE DATABASE ${DB_NAME}`);
  } finally {
    await client.end();
  }
  const u = new URL(server);
  u.pathname = `/${DB_NAME}`;
  return u.toString();
}

/**
 * Three organizations of four standalone agents (their key columns are placeholders: nothing here authenticates as
 * an agent), then a million runs over 90 days, ids in creation order, busier agents first, 88% completed, 9%
 * failed, 3% cancelled, and the last hour's runs partly still queued, running or waiting.
 */
async function seed(db: Db): Promise<string> {
  const { rows } = await db.query<{ n: number }>('SELECT count(*)::int AS n FROM runs');
  if (rows[0]!.n >= RUNS) return `${rows[0]!.n.toLocaleString('en-US')} runs already seeded in ${DB_NAME}`;
  const t0 = performance.now();
  await db.transaction(async (tx) => {
    await tx.exec('SET LOCAL statement_timeout = 0');
    await tx.exec(`
      INSERT INTO organizations (id, name) SELECT gen_random_uuid(), 'bench org ' || o FROM generate_series(1, 3) o;
      INSERT INTO agents (org_id, name, managed_by, ingest_key_digest, agent_key_digest, agent_key_enc, zone_secret_enc, credentials_secret_enc)
      SELECT (SELECT id FROM organizations ORDER BY name OFFSET (a - 1) / 4 LIMIT 1), 'bench agent ' || a, 'standalone',
             sha256(('ingest' || a || random())::bytea), sha256(('agent' || a || random())::bytea), 'x', 'x', 'x'
      FROM generate_series(1, ${AGENTS}) a;`);
    await tx.exec(`
      WITH agent_ids AS (SELECT array_agg(id ORDER BY id) AS ids FROM agents WHERE name LIKE 'bench agent %'),
      g AS (
        SELECT g, now() - interval '${DAYS} days' + (g::double precision / ${RUNS}) * interval '${DAYS} days' AS at,
               (g * 7919) % 100 AS roll
        FROM generate_series(1::bigint, ${RUNS}) g
      )
      INSERT INTO runs (agent_id, status, source, external_run_id, outputs, created_at, started_at, completed_at, updated_at, duration_ms)
      SELECT ids[1 + floor(${AGENTS} * power(((g * 104729) % 1000) / 1000.0, 2))::int],
             CASE WHEN at > now() - interval '1 hour' AND roll < 30 THEN (ARRAY['queued', 'running', 'waiting'])[1 + roll % 3]
                  WHEN roll < 88 THEN 'completed' WHEN roll < 97 THEN 'failed' ELSE 'cancelled' END,
             (ARRAY['trigger', 'trigger_and_wait', 'webhook', 'ingest', 'zone'])[1 + (g * 31) % 5],
             CASE WHEN g % 2 = 0 THEN 'ext-' || g END,
             CASE WHEN roll < 88 THEN (g * 13) % 20 ELSE 0 END,
             at, at, at + interval '30 seconds', at + interval '30 seconds', 30000
      FROM g, agent_ids;`);
  });
  // As autovacuum would after a while: statistics, and the visibility map the index-only scans rely on.
  await db.exec('VACUUM ANALYZE runs');
  return `seeded ${RUNS.toLocaleString('en-US')} runs over ${DAYS} days in ${DB_NAME} in ${ms(performance.now() - t0, 0)} (kept for later runs)`;
}

async function measureAll(db: Db, r: Report): Promise<void> {
  const config = { ...loadConfig({ LOG_LEVEL: 'warn' }) };
  const ctx = await createContext({ config, db, masterKeys: singleKeyring(randomBytes(32)), adminToken: ADMIN_TOKEN });
  const app = await buildApp(ctx);
  const headers = { authorization: `Bearer ${ADMIN_TOKEN}` };
  const get = async (url: string) => {
    const res = await app.inject({ method: 'GET', url, headers });
    if (res.statusCode !== 200) throw new Error(`${url}: ${res.statusCode} ${res.body.slice(0, 200)}`);
    return res.json<{ next_cursor?: string | null }>();
  };
  try {
    const { rows } = await db.query<{ agent_id: number }>(
      "SELECT agent_id FROM runs WHERE id > (SELECT max(id) - 10000 FROM runs) GROUP BY 1 ORDER BY count(*) DESC LIMIT 1",
    );
    const busiest = rows[0]!.agent_id;
    let cursor = '';
    for (let i = 0; i < 20; i++) cursor = (await get(`/api/admin/runs?limit=50${cursor ? `&cursor=${cursor}` : ''}`)).next_cursor!;
    const deepId = Number(Buffer.from(cursor, 'base64url').toString('utf8').split(':')[1]);
    const now = Date.now();
    const iso = (at: number) => new Date(at).toISOString();
    const page = (where: string, params: unknown[]) => () => db.query(`SELECT * FROM runs ${where} ORDER BY id DESC LIMIT 51`, params);

    await figure(r, 'runs page: first (50, newest first)', () => get('/api/admin/runs?limit=50'), page('', []));
    await figure(r, 'runs page: busiest agent + status failed', () => get(`/api/admin/runs?limit=50&agent_id=${busiest}&status=failed`),
      page('WHERE agent_id = $1 AND status = $2', [busiest, 'failed']));
    await figure(r, 'runs page: 20 cursors deep', () => get(`/api/admin/runs?limit=50&cursor=${cursor}`), page('WHERE id < $1', [deepId]));
    await figure(r, 'dashboard: 30 days (baseline: raw aggregate)', () => get('/api/admin/dashboard'),
      () => aggregateRunsByDay(db, { from: new Date(now - 30 * DAY_MS), to: new Date(now) }));
    await figure(r, 'dashboard: 90 days (baseline: raw aggregate)', () => get(`/api/admin/dashboard?from=${iso(now - 90 * DAY_MS)}&to=${iso(now)}`),
      () => aggregateRunsByDay(db, { from: new Date(now - 90 * DAY_MS), to: new Date(now) }));
  } finally {
    await app.close();
    await stopContext(ctx);
  }
}

/** p50/p95 of the route and of its baseline, alternating so drift hits both alike; PASS when the route's p95 < 100 ms. */
async function figure(r: Report, name: string, service: () => Promise<unknown>, baseline: () => Promise<unknown>): Promise<void> {
  const s: number[] = [];
  const b: number[] = [];
  for (let i = 0; i < WARMUP + ITERATIONS; i++) {
    const t0 = performance.now();
    await service();
    const t1 = performance.now();
    await baseline();
    const t2 = performance.now();
    if (i >= WARMUP) {
      s.push(t1 - t0);
      b.push(t2 - t1);
    }
  }
  const [sp, bp] = [p50p95(s), p50p95(b)];
  r.add({
    name: `1M runs — ${name}`,
    service: `p50 ${ms(sp.p50, 1)}, p95 ${ms(sp.p95, 1)}`,
    baseline: `p50 ${ms(bp.p50, 1)}, p95 ${ms(bp.p95, 1)}`,
    ratio: `${(sp.p95 / bp.p95).toFixed(2)}×`,
    target: `p95 < ${TARGET_MS} ms`,
    verdict: sp.p95 < TARGET_MS ? 'PASS' : 'MISS',
  });
}

function p50p95(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]!;
  return { p50: at(0.5), p95: at(0.95) };
}
