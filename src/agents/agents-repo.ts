import type { Queryable } from '../storage/db.ts';
import { nameContains, sqlWhere } from '../storage/sql-where.ts';
import type { AgentSecretColumns } from './agent-secrets.ts';

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

// Writes for the admin API. Callers must call ctx.agents.changed(id) after every write: instances cache agent rows
// (agent-directory.ts), and a rotated key must stop working at once.
/** Columns an admin may set (admin-api.md "Agents"); org_id is fixed at creation. */
export type AgentSettableColumns = Pick<
  AgentRow,
  | 'name'
  | 'managed_by'
  | 'status'
  | 'runtime_id'
  | 'target'
  | 'allow_external_triggers'
  | 'allow_webhook_triggers'
  | 'output_kind'
  | 'running_timeout_ms'
  | 'poll_interval_s'
  | 'default_input'
  | 'zone_app_url'
>;

export type AgentWritableColumns = AgentSettableColumns & AgentSecretColumns;

const WRITABLE: ReadonlyArray<keyof AgentWritableColumns> = [
  'name',
  'managed_by',
  'status',
  'runtime_id',
  'target',
  'allow_external_triggers',
  'allow_webhook_triggers',
  'output_kind',
  'running_timeout_ms',
  'poll_interval_s',
  'default_input',
  'zone_app_url',
  'ingest_key_digest',
  'agent_key_digest',
  'agent_key_enc',
  'webhook_token_digest',
  'webhook_token_enc',
  'zone_secret_enc',
  'credentials_secret_enc',
];

const cast = (col: keyof AgentWritableColumns): string => (col === 'default_input' ? '::jsonb' : '');
const param = (col: keyof AgentWritableColumns, value: unknown): unknown => (col === 'default_input' ? JSON.stringify(value) : value);

/** `id` comes from reserveId (sealed-columns.ts): the row's secrets are sealed for it before this INSERT. */
export async function insertAgent(q: Queryable, id: number, orgId: string, cols: AgentWritableColumns, now: Date): Promise<AgentRow> {
  const params: unknown[] = [id, orgId, now];
  const names = ['id', 'org_id', 'created_at', 'updated_at'];
  const values = ['$1', '$2', '$3', '$3'];
  for (const col of WRITABLE) {
    names.push(col);
    values.push(`$${params.push(param(col, cols[col]))}${cast(col)}`);
  }
  const { rows } = await q.query<AgentRow>(`INSERT INTO agents (${names.join(', ')}) OVERRIDING SYSTEM VALUE VALUES (${values.join(', ')}) RETURNING *`, params);
  return rows[0]!;
}

/** Reads the agent and holds its row until the transaction ends, so concurrent admin writes apply in turn. */
export async function lockAgent(q: Queryable, id: number): Promise<AgentRow | null> {
  const { rows } = await q.query<AgentRow>('SELECT * FROM agents WHERE id = $1 FOR UPDATE', [id]);
  return rows[0] ?? null;
}

/** Writes only the columns present in `patch`; the old value of a rotated secret stops matching with this UPDATE. */
export async function updateAgentColumns(q: Queryable, id: number, patch: Partial<AgentWritableColumns>, now: Date): Promise<AgentRow | null> {
  const params: unknown[] = [id, now];
  const sets = ['updated_at = $2'];
  for (const col of WRITABLE) {
    if (patch[col] !== undefined) sets.push(`${col} = $${params.push(param(col, patch[col]))}${cast(col)}`);
  }
  const { rows } = await q.query<AgentRow>(`UPDATE agents SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params);
  return rows[0] ?? null;
}

export interface AgentListFilter {
  /** Only agents of these organizations (a filter, or a caller's scope). */
  orgIds?: string[];
  runtimeId?: number;
  managedBy?: AgentRow['managed_by'];
  status?: AgentRow['status'];
  /** Only these agents (issue 40: the names of the agents a page of runs shows). */
  ids?: number[];
  /** Case-insensitive substring of the name (sql-where.ts nameContains). */
  nameContains?: string;
  /** Only agents with a smaller id (the last id of the previous page). */
  beforeId?: number;
  limit: number;
}

/** The admin list (issue 14): newest first, keyset-paginated on id. */
export async function listAgents(q: Queryable, f: AgentListFilter): Promise<AgentRow[]> {
  const params: unknown[] = [];
  const where = sqlWhere(params, (p) => [
    f.orgIds !== undefined && `org_id = ANY(${p(f.orgIds)}::uuid[])`,
    f.runtimeId !== undefined && `runtime_id = ${p(f.runtimeId)}`,
    f.managedBy !== undefined && `managed_by = ${p(f.managedBy)}`,
    f.status !== undefined && `status = ${p(f.status)}`,
    f.ids !== undefined && `id = ANY(${p(f.ids)}::bigint[])`,
    nameContains(p, ['name'], f.nameContains),
    f.beforeId !== undefined && `id < ${p(f.beforeId)}`,
  ]);
  const { rows } = await q.query<AgentRow>(`SELECT * FROM agents ${where} ORDER BY id DESC LIMIT $${params.push(f.limit)}`, params);
  return rows;
}
