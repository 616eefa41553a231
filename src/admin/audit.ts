// The audit log, read back for operators (admin-api.md "Runs and audit"), newest first, paged like every admin list
// (page-cursor.ts; issue 40 item 1: before, the newest 200 entries were all anyone could read).
import type { AppContext } from '../context.ts';
import { listAudit, type AuditRow } from '../orgs/audit-repo.ts';
import { isoOrNull } from '../runs/run-view.ts';
import type { OrgScope } from './lists.ts';
import { decodeIdCursor, pageOf, PAGE_DEFAULT, type Page } from './page-cursor.ts';

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
  query: { agentId?: number; action?: string; limit?: number; cursor?: string; scope?: OrgScope },
): Promise<Page<AuditView>> {
  const limit = query.limit ?? PAGE_DEFAULT;
  const rows = await listAudit(ctx.db, {
    agentId: query.agentId,
    action: query.action,
    orgIds: query.scope?.orgIds,
    beforeId: query.cursor === undefined ? undefined : decodeIdCursor('audit', query.cursor),
    limit: limit + 1,
  });
  return pageOf(rows, limit, 'audit', (r) => String(r.id), auditView);
}

function auditView(r: AuditRow): AuditView {
  return {
    id: Number(r.id),
    at: isoOrNull(r.at)!,
    action: r.action,
    actor_user_id: r.actor_user_id,
    agent_id: r.agent_id === null ? null : Number(r.agent_id),
    run_id: r.run_id === null ? null : Number(r.run_id),
    details: r.details ?? {},
  };
}
