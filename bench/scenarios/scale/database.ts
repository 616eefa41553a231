// The scale database (ars_bench_scale_<count>): made once, seeded through SQL in resumable batches, kept for later
// runs; and what it weighs, as notes.
import pg from 'pg';
import type { Report } from '../../report.ts';
import { ms } from '../../stats.ts';
import { ECHO_PATH, TASK } from '../../types.ts';
import { openPostgres } from '../../../src/storage/postgres-db.ts';
import { migrate } from '../../../src/storage/migrate.ts';
import type { Db } from '../../../src/storage/db.ts';

export const SCALE_RUNS = Number(process.env.BENCH_SCALE_RUNS || 10_000_000);

export const LABEL = SCALE_RUNS % 1_000_000 === 0 ? `${SCALE_RUNS / 1_000_000}M` : SCALE_RUNS % 1000 === 0 ? `${SCALE_RUNS / 1000}k` : String(SCALE_RUNS);

const DB_NAME = `ars_bench_scale_${LABEL.toLowerCase()}`;

export const SCALE = { orgs: 20, agents: 2_000, n8nEvery: 10, days: 90, batch: 1_000_000 };

/**
 * Creates, migrates and seeds the scale database (or finishes an interrupted seed; a no-op once seeded), on its own
 * connections: `npm run bench:seed` runs only this, ahead of a bench, since ten million runs take a while.
 */
export async function prepareScaleDatabase(server: string): Promise<{ url: string; seeded: string }> {
  const url = await ensureDatabase(server, DB_NAME);
  const db = await openPostgres(url, { poolSize: 2 });
  try {
    await migrate(db);
    await seedAgentsSql(db);
    return { url, seeded: await seedRuns(db, url) };
  } finally {
    await db.close();
  }
}

export async function adminQuery(server: string, sql: string, params: unknown[] = []): Promise<pg.QueryResult> {
  const client = new pg.Client({ connectionString: server });
  await client.connect();
  try {
    return await client.query(sql, params);
  } finally {
    await client.end();
  }
}

export async function ensureDatabase(server: string, dbName: string): Promise<string> {
  const { rowCount } = await adminQuery(server, 'SELECT 1 FROM pg_database WHERE datname = $1', [dbName]);
  if (!rowCount) await adminQuery(server, `CREATE DATABASE ${dbName}`);
  const u = new URL(server);
  u.pathname = `/${dbName}`;
  return u.toString();
}

/**
 * 20 organizations, each with a Trigger.dev and an n8n runtime (their URLs and keys are set each run, to this run's
 * fakes), and 2,000 platform agents: every 10th on the n8n runtime (workflow ECHO_PATH), the rest on the
 * Trigger.dev one (task TASK). Key columns are placeholders until a run gives an agent real keys (armSide).
 * Idempotent: skipped once the agents are there.
 */
export async function seedAgentsSql(db: Db): Promise<void> {
  const { rows } = await db.query<{ n: number }>("SELECT count(*)::int AS n FROM agents WHERE name LIKE 'scale agent %'");
  if (rows[0]!.n >= SCALE.agents) return;
  await db.transaction(async (tx) => {
    await tx.exec(`
      INSERT INTO organizations (id, name) SELECT gen_random_uuid(), 'scale org ' || lpad(o::text, 2, '0') FROM generate_series(1, ${SCALE.orgs}) o;
      INSERT INTO runtimes (org_id, name, kind, base_url)
      SELECT o.id, 'scale ' || k || ' ' || o.name, k, 'http://127.0.0.1:9'
      FROM organizations o, unnest(ARRAY['task', 'workflow']) k WHERE o.name LIKE 'scale org %';
      INSERT INTO agents (org_id, name, managed_by, runtime_id, target, allow_external_triggers, ingest_key_digest, agent_key_digest,
                          agent_key_enc, zone_secret_enc, credentials_secret_enc)
      SELECT o.id, 'scale agent ' || lpad(a::text, 4, '0'), 'platform', rt.id, CASE WHEN a % ${SCALE.n8nEvery} = 0 THEN '${ECHO_PATH}' ELSE '${TASK}' END, true,
             sha256(('ingest' || a || random())::bytea), sha256(('agent' || a || random())::bytea), 'x', 'x', 'x'
      FROM generate_series(1, ${SCALE.agents}) a
      JOIN organizations o ON o.name = 'scale org ' || lpad((1 + (a - 1) % ${SCALE.orgs})::text, 2, '0')
      JOIN runtimes rt ON rt.org_id = o.id AND rt.kind = CASE WHEN a % ${SCALE.n8nEvery} = 0 THEN 'workflow' ELSE 'task' END
      ORDER BY a;`);
  });
}

/**
 * SCALE_RUNS runs over 90 days, ids in creation order, in batches of up to a million rows, each batch one
 * transaction that also records itself in bench_scale_seed: an interrupted seed resumes at its first missing batch.
 * Agents by a skewed draw (the busiest of 2,000 has ~2% of all runs); 88% completed (output_data ~1 KB), 8% failed
 * (an error ~300 B), 4% cancelled; in the seed's last hour 30% still queued, running or waiting. Inputs ~300 B.
 */
async function seedRuns(db: Db, url: string): Promise<string> {
  await db.exec(`CREATE TABLE IF NOT EXISTS bench_scale_seed (batch int PRIMARY KEY, rows bigint NOT NULL, anchor timestamptz NOT NULL, done_at timestamptz NOT NULL DEFAULT now())`);
  const batches = Math.ceil(SCALE_RUNS / SCALE.batch);
  const { rows: all } = await db.query<{ batch: number; anchor: Date }>('SELECT batch, anchor FROM bench_scale_seed ORDER BY batch');
  // Batch -1 records the VACUUM ANALYZE that ends the seed (an interrupted one is run again).
  const done = all.filter((d) => d.batch >= 0);
  if (done.length >= batches && all.some((d) => d.batch === -1)) return `${SCALE_RUNS.toLocaleString('en-US')} runs already seeded in ${DB_NAME} (kept for later runs)`;
  const anchor = done[0]?.anchor ?? new Date();
  const have = new Set(done.map((d) => d.batch));
  const t0 = performance.now();
  const before = done.length;
  for (let b = 0; b < batches; b++) {
    if (have.has(b)) continue;
    const from = b * SCALE.batch + 1;
    const to = Math.min(SCALE_RUNS, (b + 1) * SCALE.batch);
    const tb = performance.now();
    await db.transaction(async (tx) => {
      await tx.exec('SET LOCAL statement_timeout = 0');
      await tx.query(
        `WITH agent_ids AS (SELECT array_agg(id ORDER BY name) AS ids FROM agents WHERE name LIKE 'scale agent %'),
         g AS (
           SELECT g, $1::timestamptz - interval '${SCALE.days} days' + (g::double precision / ${SCALE_RUNS}) * interval '${SCALE.days} days' AS at,
                  (g * 7919) % 1000 AS roll, md5(g::text) AS h, md5((g + 1)::text) AS h2
           FROM generate_series($2::bigint, $3::bigint) g
         ),
         s AS (
           SELECT g.*, CASE WHEN at > $1::timestamptz - interval '1 hour' AND roll < 300 THEN (ARRAY['queued', 'running', 'waiting'])[1 + roll % 3]
                            WHEN roll < 880 THEN 'completed' WHEN roll < 960 THEN 'failed' ELSE 'cancelled' END AS status
           FROM g
         )
         INSERT INTO runs (agent_id, status, source, external_run_id, input, metadata, output_data, outputs, error,
                           created_at, started_at, completed_at, updated_at, duration_ms)
         SELECT ids[1 + floor(${SCALE.agents} * power(((g * 104729) % 100003) / 100003.0, 2))::int], status,
                (ARRAY['trigger', 'trigger_and_wait', 'webhook', 'ingest', 'zone'])[1 + (g * 31) % 5],
                CASE WHEN roll % 10 <> 0 THEN 'run_' || substr(h, 1, 20) END,
                jsonb_build_object('document_id', 'doc_' || h, 'customer', jsonb_build_object('id', 'cus_' || substr(h2, 1, 14), 'email', 'user' || (g % 50000) || '@example.com', 'plan', 'pro'),
                  'options', jsonb_build_object('language', 'en', 'max_tokens', 1024, 'temperature', 0.2, 'format', 'markdown'),
                  'prompt', 'Summarize the attached document for the weekly report and list its open action items. ' || h2),
                jsonb_build_object('env', 'production', 'trace_id', substr(h2, 1, 16)),
                CASE WHEN status = 'completed' THEN jsonb_build_object(
                  'summary', 'The document covers ' || h || '. ' || repeat(h2 || ' ', 8),
                  'items', jsonb_build_array(
                    jsonb_build_object('title', 'Follow up ' || substr(h, 1, 8), 'owner', 'user' || (g % 997) || '@example.com', 'due', '2026-12-01', 'done', false),
                    jsonb_build_object('title', 'Review ' || substr(h, 9, 8), 'owner', 'user' || (g % 991) || '@example.com', 'due', '2026-12-08', 'done', true),
                    jsonb_build_object('title', 'Send ' || substr(h, 17, 8), 'owner', 'user' || (g % 983) || '@example.com', 'due', '2026-12-15', 'done', false)),
                  'usage', jsonb_build_object('input_tokens', 1000 + g % 3000, 'output_tokens', 200 + g % 800, 'model', 'gpt-4o-mini'),
                  'checksum', h2) END,
                CASE WHEN status = 'completed' THEN 1 + (g * 13) % 20 ELSE 0 END,
                CASE WHEN status = 'failed' THEN jsonb_build_object('name', 'Error', 'message', 'Upstream API answered 502 Bad Gateway for document doc_' || h,
                  'stackTrace', 'Error: Upstream API answered 502\n    at fetchDocument (src/trigger/summarize.ts:42:11)\n    at run (src/trigger/summarize.ts:17:5)\n    at async executeTask (node_modules/@trigger.dev/core/dist/index.js:812:22)') END,
                at,
                CASE WHEN status <> 'queued' THEN at + interval '2 seconds' END,
                CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN at + interval '30 seconds' END,
                CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN at + interval '30 seconds' ELSE at END,
                CASE WHEN status IN ('completed', 'failed', 'cancelled') THEN 30000 END
         FROM s, agent_ids`,
        [anchor, from, to],
      );
      await tx.query('INSERT INTO bench_scale_seed (batch, rows, anchor) VALUES ($1, $2, $3)', [b, to - from + 1, anchor]);
    });
    console.log(`  · seeding ${DB_NAME}: batch ${b + 1}/${batches} (${(to - from + 1).toLocaleString('en-US')} runs) in ${ms(performance.now() - tb, 0)}`);
  }
  // As autovacuum would after a while: statistics, and the visibility map the index-only scans rely on.
  await vacuumRuns(url);
  await db.query('INSERT INTO bench_scale_seed (batch, rows, anchor) VALUES (-1, 0, $1) ON CONFLICT DO NOTHING', [anchor]);
  const part = before > 0 ? ` (${batches - before} of ${batches} batches and the VACUUM ANALYZE in this run)` : '';
  return `seeded ${SCALE_RUNS.toLocaleString('en-US')} runs over ${SCALE.days} days on ${SCALE.agents.toLocaleString('en-US')} agents in ${DB_NAME} in ${ms(performance.now() - t0, 0)}${part} (kept for later runs)`;
}

/** VACUUM ANALYZE runs, on a connection of its own: VACUUM runs outside a transaction, and past the pool's statement timeout. */
export async function vacuumRuns(url: string): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await client.query('SET statement_timeout = 0');
    await client.query('VACUUM ANALYZE runs');
  } finally {
    await client.end();
  }
}

export async function sizes(r: Report, db: Db): Promise<void> {
  const { rows: tables } = await db.query<{ name: string; total: string; heap: string; toast: string; indexes: string; rows: string }>(
    `SELECT c.relname AS name, pg_size_pretty(pg_total_relation_size(c.oid)) AS total, pg_size_pretty(pg_relation_size(c.oid)) AS heap,
            pg_size_pretty(coalesce(pg_total_relation_size(nullif(c.reltoastrelid, 0)), 0)) AS toast, pg_size_pretty(pg_indexes_size(c.oid)) AS indexes,
            CASE WHEN c.reltuples < 0 THEN 'unanalyzed' ELSE '~' || to_char(c.reltuples::bigint, 'FM999,999,999,999') END AS rows
     FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'r' AND pg_total_relation_size(c.oid) > 1024 * 1024
     ORDER BY pg_total_relation_size(c.oid) DESC`,
  );
  for (const t of tables) r.note(`${LABEL} runs — table ${t.name}: ${t.total} in all (heap ${t.heap}, TOAST ${t.toast}, indexes ${t.indexes}), ${t.rows} rows`);
  const { rows: idx } = await db.query<{ name: string; size: string }>(
    `SELECT indexrelid::regclass::text AS name, pg_size_pretty(pg_relation_size(indexrelid)) AS size
     FROM pg_index WHERE indrelid = 'runs'::regclass ORDER BY pg_relation_size(indexrelid) DESC`,
  );
  r.note(`${LABEL} runs — runs indexes: ${idx.map((i) => `${i.name} ${i.size}`).join(', ')}`);
  const { rows: avg } = await db.query<{ input: number; output: number; error: number }>(
    `SELECT avg(pg_column_size(input))::int AS input, avg(pg_column_size(output_data))::int AS output, avg(pg_column_size(error))::int AS error
     FROM runs TABLESAMPLE SYSTEM (0.1)`,
  );
  r.note(`${LABEL} runs — stored JSON per run (sampled): input ${avg[0]!.input} B, output_data ${avg[0]!.output} B (completed runs), error ${avg[0]!.error} B (failed runs)`);
}
