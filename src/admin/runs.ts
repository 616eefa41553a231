// Runs for the admin API (admin-api.md "Runs and audit"): newest first, keyset pagination on id behind an
// opaque cursor, so a page never shifts when new runs arrive.
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import type { RunStatus } from '../runs/run-states.ts';
import { findRun, listRuns } from '../runs/runs-repo.ts';

import { toAdminRunView, type AdminRunView } from '../runs/run-view.ts';

export const RUN_PAGE_DEFAULT = 50;
export const RUN_PAGE_MAX = 200;

export interface RunListQuery {
  agentId?: number;
  status?: RunStatus;
  limit?: number;
  cursor?: string;
}

export async function listRunsPage(ctx: AppContext, query: RunListQuery): Promise<{ data: AdminRunView[]; next_cursor: string | null }> {
  const limit = query.limit ?? RUN_PAGE_DEFAULT;
  const beforeId = query.cursor === undefined ? undefined : decodeCursor(query.cursor);
  // One extra row tells whether another page exists without a count.
  const rows = await listRuns(ctx.db, { agentId: query.agentId, status: query.status, beforeId, limit: limit + 1 });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { data: page.map(toAdminRunView), next_cursor: rows.length > limit && last ? encodeCursor(Number(last.id)) : null };
}

export async function getRunView(ctx: AppContext, runId: number): Promise<AdminRunView> {
  const run = await findRun(ctx.db, runId);
  if (!run) throw errors.notFound('run');
  return toAdminRunView(run);
}

export function encodeCursor(lastId: number): string {
  return Buffer.from(`runs:${lastId}`, 'utf8').toString('base64url');
}

function decodeCursor(cursor: string): number {
  const match = /^runs:([1-9][0-9]{0,15})$/.exec(Buffer.from(cursor, 'base64url').toString('utf8'));
  const id = match ? Number(match[1]) : NaN;
  if (!Number.isSafeInteger(id)) throw errors.invalid('querystring.cursor', 'is not a cursor this API handed out');
  return id;
}
