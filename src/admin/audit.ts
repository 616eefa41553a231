// The audit log, read back for operators (admin-api.md "Runs and audit"), newest first.
import type { AppContext } from '../context.ts';
import { listAudit } from '../orgs/audit-repo.ts';
import { isoOrNull } from '../runs/run-view.ts';
import type { OrgScope } from './lists.ts';

export const AUDIT_PAGE_DEFAULT = 50;
export const AUDIT_PAGE_MAX = 200;

export interface AuditView {
  id: number;
  at: string;
  action: string;
  actor_user_id: string | null;
  agent_id: number | null;
  run_id: number | null;
  details: Record<string, unknown>;
}

export async function listAuditEntries(
  ctx: AppContext,
  query: { agentId?: number; action?: string; limit?: number; scope?: OrgScope },
): Promise<{ data: AuditView[] }> {
  const rows = await listAudit(ctx.db, { agentId: query.agentId, action: query.action, orgIds: query.scope?.orgIds, limit: query.limit ?? AUDIT_PAGE_DEFAULT });
  return {
    data: rows.map((r) => ({
      id: Number(r.id),
      at: isoOrNull(r.at)!,
      action: r.action,
      actor_user_id: r.actor_user_id,
      agent_id: r.agent_id === null ? null : Number(r.agent_id),
      run_id: r.run_id === null ? null : Number(r.run_id),
      details: r.details ?? {},
    })),
  };
}
