// The append-only audit log (decisions.md "Events"): entries are appended inside the transaction of what they record.
import type { Queryable } from '../storage/db.ts';

export interface AuditEntry {
  action: string; // e.g. run.waitpoint_completed, agent.key_rotated, agent.webhook_token_revealed
  actorUserId?: string | null;
  agentId?: number | null;
  runId?: number | null;
  details?: Record<string, unknown>; // never secrets
}

export async function appendAudit(q: Queryable, entry: AuditEntry, now: Date): Promise<void> {
  await q.query('INSERT INTO audit_log (at, action, actor_user_id, agent_id, run_id, details) VALUES ($1, $2, $3, $4, $5, $6::jsonb)', [
    now,
    entry.action,
    entry.actorUserId ?? null,
    entry.agentId ?? null,
    entry.runId ?? null,
    JSON.stringify(entry.details ?? {}),
  ]);
}

// Read side of the append-only audit log (decisions.md "Events"), newest first.

export interface AuditRow {
  id: number;
  at: Date;
  action: string;
  actor_user_id: string | null;
  agent_id: number | null;
  run_id: number | null;
  details: Record<string, unknown>;
}

/** With `orgIds`, only entries about those organizations' agents (platform-wide entries are for platform admins). */
export async function listAudit(
  q: Queryable,
  f: { agentId?: number; action?: string; orgIds?: string[]; beforeId?: number; limit: number },
): Promise<AuditRow[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (f.agentId !== undefined) where.push(`agent_id = $${params.push(f.agentId)}`);
  if (f.orgIds !== undefined) where.push(`agent_id IN (SELECT id FROM agents WHERE org_id = ANY($${params.push(f.orgIds)}::uuid[]))`);
  if (f.action !== undefined) where.push(`action = $${params.push(f.action)}`);
  // Keyset paging on id, as every admin list (admin/page-cursor.ts): ids only grow, so a page never shifts.
  if (f.beforeId !== undefined) where.push(`id < $${params.push(f.beforeId)}`);
  const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.push(f.limit)}`;
  const { rows } = await q.query<AuditRow>(sql, params);
  return rows;
}

/**
 * Audit retention, opt-in (ARS_AUDIT_RETENTION_DAYS; decisions.md "Data lifecycle"): up to `limit` entries older
 * than `cutoff`, oldest first. Entries are appended in time order, so the primary key's order is their age order
 * and no index on `at` is needed: the first entry young enough to stay is found from the oldest end, and the
 * entries before it go. Nothing young goes; an old entry written after a young one (an instance whose clock
 * lagged) waits until that one is old too.
 */
export async function deleteAuditBefore(q: Queryable, cutoff: Date, limit: number): Promise<number> {
  const { rowCount } = await q.query(
    `DELETE FROM audit_log WHERE id = ANY(ARRAY(
       SELECT id FROM audit_log WHERE id < coalesce((SELECT min(id) FROM audit_log WHERE at >= $1), ${Number.MAX_SAFE_INTEGER})
       ORDER BY id LIMIT $2 FOR UPDATE SKIP LOCKED))`,
    [cutoff, limit],
  );
  return rowCount;
}
