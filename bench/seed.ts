// Seeds the bench's agents straight through SQL, as test/helpers/fixtures.ts does (same columns, same secret
// helpers), but thousands at a time: one organization, one Trigger.dev runtime and one n8n runtime shared by
// every agent, multi-row INSERTs of 500 agents each. Ids are reserved first: each secret is sealed for its row.
import { randomUUID } from 'node:crypto';
import type { Db } from '../src/storage/db.ts';
import type { SecretBox } from '../src/lib/secrets.ts';
import { newAgentSecrets } from '../src/agents/agent-secrets.ts';
import { reserveId, sealedAt } from '../src/storage/sealed-columns.ts';
import { DOWNLOAD_PATH, ECHO_PATH, TASK, type AgentKeys, type FakeUrls, type Seeded } from './types.ts';

export interface SeedCounts {
  task: number;
  progress: number;
  wake: number;
  workflow: number;
  download: number;
}

interface AgentSpec {
  runtimeId: number;
  target: string;
  outputKind: 'json' | 'file_download';
}

const COLUMNS = `id, org_id, name, managed_by, status, runtime_id, target, allow_external_triggers, allow_webhook_triggers,
  output_kind, running_timeout_ms, poll_interval_s, default_input, zone_app_url,
  ingest_key_digest, agent_key_digest, agent_key_enc, webhook_token_digest, webhook_token_enc, zone_secret_enc, credentials_secret_enc`;
const PER_ROW = 21;
const BATCH = 500;

async function insertAgents(db: Db, box: SecretBox, orgId: string, spec: AgentSpec, count: number): Promise<AgentKeys[]> {
  const out: AgentKeys[] = [];
  for (let done = 0; done < count; done += BATCH) {
    const n = Math.min(BATCH, count - done);
    const params: unknown[] = [];
    const plain: Array<{ ingestKey: string; agentKey: string }> = [];
    const tuples: string[] = [];
    const { rows: ids } = await db.query<{ id: number }>(`SELECT nextval(pg_get_serial_sequence('agents', 'id')) AS id FROM generate_series(1, $1)`, [n]);
    for (let i = 0; i < n; i++) {
      const id = ids[i]!.id;
      const s = newAgentSecrets(box, id, false);
      const c = s.columns;
      plain.push({ ingestKey: s.plain.ingest_api_key, agentKey: s.plain.agent_api_key });
      const base = params.length;
      params.push(
        id, orgId, `bench agent ${done + i}`, 'platform', 'active', spec.runtimeId, spec.target, true, false,
        spec.outputKind, 7_200_000, 60, '{}', null,
        c.ingest_key_digest, c.agent_key_digest, c.agent_key_enc, c.webhook_token_digest, c.webhook_token_enc, c.zone_secret_enc, c.credentials_secret_enc,
      );
      tuples.push(`(${Array.from({ length: PER_ROW }, (_, k) => `$${base + k + 1}${k === 12 ? '::jsonb' : ''}`).join(', ')})`);
    }
    const { rows } = await db.query<{ id: number }>(`INSERT INTO agents (${COLUMNS}) OVERRIDING SYSTEM VALUE VALUES ${tuples.join(', ')} RETURNING id`, params);
    rows.forEach((r, i) => out.push({ id: r.id, ...plain[i]! }));
  }
  return out;
}

export async function seedAgents(db: Db, box: SecretBox, fakes: FakeUrls, counts: SeedCounts): Promise<Seeded> {
  const orgId = randomUUID();
  await db.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [orgId, 'Bench']);
  const runtime = async (kind: 'task' | 'workflow', baseUrl: string, apiKey: string) => {
    const id = await reserveId(db, 'runtimes');
    await db.query(
      'INSERT INTO runtimes (id, org_id, name, kind, base_url, api_key_enc) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6)',
      [id, orgId, `bench ${kind}`, kind, baseUrl, box.seal(apiKey, sealedAt('runtimes', 'api_key_enc', id))],
    );
    return id;
  };
  const taskRt = await runtime('task', fakes.trigger, fakes.triggerSecret);
  const flowRt = await runtime('workflow', fakes.n8n, fakes.n8nApiKey);
  const task = { runtimeId: taskRt, target: TASK, outputKind: 'json' as const };
  return {
    task: await insertAgents(db, box, orgId, task, counts.task),
    progress: await insertAgents(db, box, orgId, task, counts.progress),
    wake: await insertAgents(db, box, orgId, task, counts.wake),
    workflow: await insertAgents(db, box, orgId, { runtimeId: flowRt, target: ECHO_PATH, outputKind: 'json' }, counts.workflow),
    download: await insertAgents(db, box, orgId, { runtimeId: flowRt, target: DOWNLOAD_PATH, outputKind: 'file_download' }, counts.download),
    hammer: (await insertAgents(db, box, orgId, task, 1))[0]!,
  };
}

/** One `running` run per agent (what a task that has called back `started` looks like), for /callback. */
export async function seedRunningRuns(db: Db, agentIds: number[]): Promise<Array<{ runId: number; agentId: number }>> {
  const { rows } = await db.query<{ id: number; agent_id: number }>(
    `INSERT INTO runs (agent_id, status, source, created_at, started_at, updated_at)
     SELECT a, 'running', 'bench', now(), now(), now() FROM unnest($1::bigint[]) AS a RETURNING id, agent_id`,
    [agentIds],
  );
  return rows.map((r) => ({ runId: r.id, agentId: r.agent_id }));
}

/**
 * `runs` completed runs from a year ago and earlier (30 days of them, round-robin over `agentIds`), each with a
 * ~300 B input, a ~1 KB output and its timeline entry, what run retention (ARS_RUN_RETENTION_DAYS) deletes: in
 * transactions of 100,000 runs so PGlite's memory and PostgreSQL's WAL stay bounded. Returns the seconds it took.
 */
export async function seedOldRuns(db: Db, agentIds: number[], runs: number): Promise<number> {
  const t0 = Date.now();
  const CHUNK = 100_000;
  const stepMs = (30 * 86_400_000) / runs;
  for (let first = 1; first <= runs; first += CHUNK) {
    await db.query(
      `WITH r AS (
         INSERT INTO runs (agent_id, status, source, input, output_data, outputs, created_at, started_at, completed_at, updated_at)
         SELECT ($1::bigint[])[1 + n % cardinality($1::bigint[])], 'completed', 'bench',
           jsonb_build_object('prompt', repeat('i', 280)), jsonb_build_object('answer', repeat('o', 1000)), n % 5,
           now() - interval '400 days' + n * $2::float8 * interval '1 millisecond',
           now() - interval '400 days' + n * $2::float8 * interval '1 millisecond',
           now() - interval '400 days' + (n * $2::float8 + 60000) * interval '1 millisecond',
           now() - interval '400 days' + (n * $2::float8 + 60000) * interval '1 millisecond'
         FROM generate_series($3::int, $4::int) AS n
         RETURNING id, completed_at
       )
       INSERT INTO run_transitions (run_id, status, via, at) SELECT id, 'completed', 'callback', completed_at FROM r`,
      [agentIds, stepMs, first, Math.min(runs, first + CHUNK - 1)],
    );
  }
  return (Date.now() - t0) / 1000;
}
