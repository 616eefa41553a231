import type { Queryable } from '../storage/db.ts';

export interface AgentRow {
  id: number;
  org_id: string;
  name: string;
  managed_by: 'platform' | 'standalone';
  status: 'active' | 'paused' | 'archived';
  runtime_id: number | null;
  target: string | null;
  allow_external_triggers: boolean;
  allow_webhook_triggers: boolean;
  output_kind: 'json' | 'file_download';
  running_timeout_ms: number;
  poll_interval_s: number;
  default_input: Record<string, unknown>;
  zone_app_url: string | null;
  ingest_key_digest: Uint8Array;
  agent_key_digest: Uint8Array;
  agent_key_enc: string;
  webhook_token_digest: Uint8Array | null;
  webhook_token_enc: string | null;
  zone_secret_enc: string;
  credentials_secret_enc: string;
  created_at: Date;
  updated_at: Date;
}

export const AGENT_CHANGED_CHANNEL = 'ars_agent';

export async function findAgent(q: Queryable, id: number): Promise<AgentRow | null> {
  const { rows } = await q.query<AgentRow>('SELECT * FROM agents WHERE id = $1', [id]);
  return rows[0] ?? null;
}

export async function findAgentByAgentKeyDigest(q: Queryable, keyDigest: Buffer): Promise<AgentRow | null> {
  const { rows } = await q.query<AgentRow>('SELECT * FROM agents WHERE agent_key_digest = $1', [keyDigest]);
  return rows[0] ?? null;
}

/** Tells every instance (through LISTEN) that its cached copy of the agent is stale. */
export async function notifyAgentChanged(q: Queryable, id: number | string): Promise<void> {
  await q.query(`SELECT pg_notify('${AGENT_CHANGED_CHANNEL}', $1)`, [String(id)]);
}
