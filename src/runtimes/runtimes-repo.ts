// Runtimes: an organization's connection to one n8n instance or Trigger.dev API (runtimes.md). Secrets sealed.
import type { Queryable } from '../storage/db.ts';
import { nameContains, sqlWhere } from '../storage/sql-where.ts';
import type { RuntimeKind } from './runtime-adapter.ts';

export interface RuntimeRow {
  id: number;
  org_id: string;
  name: string;
  kind: RuntimeKind;
  base_url: string;
  api_key_enc: string | null;
  alert_secret_enc: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface RuntimeColumns {
  name: string;
  base_url: string;
  api_key_enc: string | null;
  alert_secret_enc: string | null;
}

const UPDATABLE: ReadonlyArray<keyof RuntimeColumns> = ['name', 'base_url', 'api_key_enc', 'alert_secret_enc'];

/** `id` comes from reserveId (sealed-columns.ts): the row's secrets are sealed for it before this INSERT. */
export async function insertRuntime(
  q: Queryable,
  id: number,
  r: RuntimeColumns & { org_id: string; kind: RuntimeKind },
  now: Date,
): Promise<RuntimeRow> {
  const { rows } = await q.query<RuntimeRow>(
    `INSERT INTO runtimes (id, org_id, name, kind, base_url, api_key_enc, alert_secret_enc, created_at, updated_at)
     OVERRIDING SYSTEM VALUE VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8) RETURNING *`,
    [id, r.org_id, r.name, r.kind, r.base_url, r.api_key_enc, r.alert_secret_enc, now],
  );
  return rows[0]!;
}

export async function findRuntime(q: Queryable, id: number): Promise<RuntimeRow | null> {
  const { rows } = await q.query<RuntimeRow>('SELECT * FROM runtimes WHERE id = $1', [id]);
  return rows[0] ?? null;
}

/** Writes only the columns present in `patch` (kind and org_id never change). */
export async function updateRuntime(q: Queryable, id: number, patch: Partial<RuntimeColumns>, now: Date): Promise<RuntimeRow | null> {
  const params: unknown[] = [id, now];
  const sets = ['updated_at = $2'];
  for (const col of UPDATABLE) if (patch[col] !== undefined) sets.push(`${col} = $${params.push(patch[col])}`);
  const { rows } = await q.query<RuntimeRow>(`UPDATE runtimes SET ${sets.join(', ')} WHERE id = $1 RETURNING *`, params);
  return rows[0] ?? null;
}

export interface RuntimeListFilter {
  /** Only runtimes of these organizations (a filter, or a caller's scope). */
  orgIds?: string[];
  kind?: RuntimeKind;
  /** Case-insensitive substring of the name (sql-where.ts nameContains). */
  nameContains?: string;
  /** Only runtimes with a smaller id (the last id of the previous page). */
  beforeId?: number;
  limit: number;
}

/** The admin list (issue 14): newest first, keyset-paginated on id. */
export async function listRuntimes(q: Queryable, f: RuntimeListFilter): Promise<RuntimeRow[]> {
  const params: unknown[] = [];
  const where = sqlWhere(params, (p) => [
    f.orgIds !== undefined && `org_id = ANY(${p(f.orgIds)}::uuid[])`,
    f.kind !== undefined && `kind = ${p(f.kind)}`,
    nameContains(p, ['name'], f.nameContains),
    f.beforeId !== undefined && `id < ${p(f.beforeId)}`,
  ]);
  const { rows } = await q.query<RuntimeRow>(`SELECT * FROM runtimes ${where} ORDER BY id DESC LIMIT $${params.push(f.limit)}`, params);
  return rows;
}
