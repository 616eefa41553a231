// Seeds straight through SQL with the same secret helpers the admin API uses, so endpoint suites do not depend on
// the admin API (which has its own suite).
import { randomUUID } from 'node:crypto';
import type { TestApp } from './test-app.ts';
import type { AgentRow } from '../../src/agents/agents-repo.ts';
import { newAgentSecrets } from '../../src/agents/agent-secrets.ts';
import { reserveId, sealedAt } from '../../src/storage/sealed-columns.ts';

export interface SeededAgent {
  agent: AgentRow;
  orgId: string;
  runtimeId: number | null;
  ingestKey: string;
  agentKey: string;
  zoneSecret: string;
  webhookToken: string | null;
  /** Authorization header values. */
  ingestAuth: { authorization: string };
  agentAuth: { authorization: string };
}

export interface AgentOverrides {
  orgId?: string;
  managed_by?: 'platform' | 'standalone';
  status?: 'active' | 'paused' | 'archived';
  allow_external_triggers?: boolean;
  allow_webhook_triggers?: boolean;
  output_kind?: 'json' | 'file_download';
  running_timeout_ms?: number;
  poll_interval_s?: number;
  default_input?: Record<string, unknown>;
  zone_app_url?: string | null;
  /** Give the agent a runtime of this kind at this base URL. */
  runtime?: { kind: 'workflow' | 'task'; baseUrl: string; apiKey?: string | null; alertSecret?: string | null };
  target?: string | null;
}

export async function seedOrg(t: TestApp, name = 'Acme'): Promise<string> {
  const id = randomUUID();
  await t.db.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [id, name]);
  return id;
}

export async function seedUser(t: TestApp, opts: { orgId?: string; platformAdmin?: boolean; role?: 'admin' | 'member' } = {}): Promise<string> {
  const id = randomUUID();
  await t.db.query('INSERT INTO users (id, email, platform_admin) VALUES ($1, $2, $3)', [id, `${id}@example.test`, opts.platformAdmin ?? false]);
  if (opts.orgId) await t.db.query('INSERT INTO memberships (org_id, user_id, role) VALUES ($1, $2, $3)', [opts.orgId, id, opts.role ?? 'member']);
  return id;
}

export async function seedRuntime(
  t: TestApp,
  orgId: string,
  rt: { kind: 'workflow' | 'task'; baseUrl: string; apiKey?: string | null; alertSecret?: string | null },
): Promise<number> {
  const box = t.ctx.secrets;
  const id = await reserveId(t.db, 'runtimes');
  await t.db.query(
    'INSERT INTO runtimes (id, org_id, name, kind, base_url, api_key_enc, alert_secret_enc) OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7)',
    [
      id,
      orgId,
      `${rt.kind} runtime`,
      rt.kind,
      rt.baseUrl,
      rt.apiKey ? box.seal(rt.apiKey, sealedAt('runtimes', 'api_key_enc', id)) : null,
      rt.alertSecret ? box.seal(rt.alertSecret, sealedAt('runtimes', 'alert_secret_enc', id)) : null,
    ],
  );
  return id;
}

export async function seedAgent(t: TestApp, o: AgentOverrides = {}): Promise<SeededAgent> {
  const orgId = o.orgId ?? (await seedOrg(t));
  const runtimeId = o.runtime ? await seedRuntime(t, orgId, o.runtime) : null;
  const id = await reserveId(t.db, 'agents');
  const secrets = newAgentSecrets(t.ctx.secrets, id, o.allow_webhook_triggers ?? false);
  const c = secrets.columns;
  const { rows } = await t.db.query<AgentRow>(
    `INSERT INTO agents (id, org_id, name, managed_by, status, runtime_id, target, allow_external_triggers, allow_webhook_triggers,
       output_kind, running_timeout_ms, poll_interval_s, default_input, zone_app_url,
       ingest_key_digest, agent_key_digest, agent_key_enc, webhook_token_digest, webhook_token_enc, zone_secret_enc, credentials_secret_enc)
     OVERRIDING SYSTEM VALUE VALUES ($20, $1, 'test agent', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11::jsonb, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING *`,
    [
      orgId,
      o.managed_by ?? 'platform',
      o.status ?? 'active',
      runtimeId,
      o.target ?? (runtimeId ? 'my-target' : null),
      o.allow_external_triggers ?? true,
      o.allow_webhook_triggers ?? false,
      o.output_kind ?? 'json',
      o.running_timeout_ms ?? 7_200_000,
      o.poll_interval_s ?? 60,
      JSON.stringify(o.default_input ?? {}),
      o.zone_app_url ?? null,
      c.ingest_key_digest,
      c.agent_key_digest,
      c.agent_key_enc,
      c.webhook_token_digest,
      c.webhook_token_enc,
      c.zone_secret_enc,
      c.credentials_secret_enc,
      id,
    ],
  );
  const p = secrets.plain;
  return {
    agent: rows[0]!,
    orgId,
    runtimeId,
    ingestKey: p.ingest_api_key,
    agentKey: p.agent_api_key,
    zoneSecret: p.zone_jwt_secret,
    webhookToken: p.webhook_token,
    ingestAuth: { authorization: `Bearer ${p.ingest_api_key}` },
    agentAuth: { authorization: `Bearer ${p.agent_api_key}` },
  };
}

/** Reads a run row straight from the database (for asserting what was, or was not, written). */
export async function readRun(t: TestApp, runId: number) {
  const { rows } = await t.db.query<Record<string, unknown>>('SELECT * FROM runs WHERE id = $1', [runId]);
  return rows[0] ?? null;
}

export async function countRows(t: TestApp, table: string): Promise<number> {
  const { rows } = await t.db.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${table}`);
  return rows[0]!.n;
}
