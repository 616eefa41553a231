// Runs for the admin API (admin-api.md "Runs and audit"): newest first, keyset pagination on id behind an
// opaque cursor, so a page never shifts when new runs arrive.
import type { AppContext } from '../context.ts';
import { errors } from '../errors.ts';
import type { RunStatus } from '../runs/run-states.ts';
import { findRun } from '../runs/runs-repo.ts';
import { listRuns } from '../runs/run-list.ts';
import { listReplays, listTransitions } from '../runs/run-timeline.ts';
import { toAdminRunDetail, toAdminRunView, type AdminRunDetail, type AdminRunView } from '../runs/run-view.ts';
import type { OrgScope } from './lists.ts';
import { parseTimestamp, TIMESTAMP_RULE } from '../lib/timestamps.ts';
import { decodeIdCursor, pageOf, PAGE_DEFAULT, type Page } from './page-cursor.ts';

export interface RunListQuery {
  agentId?: number;
  status?: RunStatus;
  source?: string;
  /** ISO 8601 date-times, as the query string gives them: [created_from, created_to). */
  createdFrom?: string;
  createdTo?: string;
  externalRunId?: string;
  createdBy?: string;
  /** Only runs of these organizations' agents (a user's scope); platform admins see all. */
  scope?: OrgScope;
  limit?: number;
  cursor?: string;
}

export async function listRunsPage(ctx: AppContext, query: RunListQuery): Promise<Page<AdminRunView>> {
  const limit = query.limit ?? PAGE_DEFAULT;
  const beforeId = query.cursor === undefined ? undefined : decodeIdCursor('runs', query.cursor);
  const rows = await listRuns(ctx.db, {
    agentId: query.agentId,
    status: query.status,
    source: query.source,
    createdFrom: timestampParam(query.createdFrom, 'created_from'),
    createdTo: timestampParam(query.createdTo, 'created_to'),
    externalRunId: query.externalRunId,
    createdBy: query.createdBy?.toLowerCase(),
    orgIds: query.scope?.orgIds,
    beforeId,
    limit: limit + 1,
  });
  return pageOf(rows, limit, 'runs', (r) => String(r.id), toAdminRunView);
}

function timestampParam(text: string | undefined, name: string): Date | undefined {
  if (text === undefined) return undefined;
  const at = parseTimestamp(text);
  if (!at) throw errors.invalid(`querystring.${name}`, TIMESTAMP_RULE);
  return at;
}

export async function getRunView(ctx: AppContext, runId: number): Promise<AdminRunDetail> {
  const run = await findRun(ctx.db, runId);
  if (!run) throw errors.notFound('run');
  const [timeline, replays] = await Promise.all([listTransitions(ctx.db, run), listReplays(ctx.db, runId)]);
  return toAdminRunDetail(run, timeline, replays);
}
