// Read side of the append-only audit log (decisions.md "Events"), newest first.
import type { Queryable } from '../storage/db.ts';

export interface AuditRow {
  id: number;
  at: Date;
  action: string;
  actor_user_id: string | null;
  agent_id: number | null;
  run_id: number | null;
  details: Record<string, unknown>;
}

export async function listAudit(q: Queryable, f: { agentId?: number; action?: string; limit: number }): Promise<AuditRow[]> {
  const params: unknown[] = [];
  const where: string[] = [];
  if (f.agentId !== undefined) where.push(`agent_id = $${params.push(f.agentId)}`);
  if (f.action !== undefined) where.push(`action = $${params.push(f.action)}`);
  const sql = `SELECT * FROM audit_log ${where.length ? `WHERE ${where.join(' AND ')}` : ''} ORDER BY id DESC LIMIT $${params.push(f.limit)}`;
  const { rows } = await q.query<AuditRow>(sql, params);
  return rows;
}
