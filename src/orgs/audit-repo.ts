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
