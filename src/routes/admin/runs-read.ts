// admin-api.md "Runs and audit": list and read runs (cancel and logs live in their own modules).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { RUN_STATUSES } from '../../runs/run-states.ts';
import { getRunView, listRunsPage } from '../../admin/runs.ts';
import { PAGE_MAX } from '../../admin/page-cursor.ts';
import { numericId, queryInt } from './params.ts';
import { DigitsParam, Uuid } from './schemas.ts';
import { RunPage } from './views.ts';
import { AdminRunDetail, ref } from '../../schemas/responses.ts';
import { orgScope } from '../../orgs/principal.ts';

const RunListQuery = Type.Object({
  agent_id: Type.Optional(DigitsParam),
  status: Type.Optional(Type.Enum([...RUN_STATUSES])),
  source: Type.Optional(Type.String({ pattern: '^[a-z_]{1,32}$' })),
  created_from: Type.Optional(Type.String({ maxLength: 64 })),
  created_to: Type.Optional(Type.String({ maxLength: 64 })),
  external_run_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  created_by: Type.Optional(Uuid),
  limit: Type.Optional(Type.String({ maxLength: 16 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
const RunParams = Type.Object({ runId: Type.String() });

export default async function runReadRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  // An agent_id nobody has filters to an empty page: a filter is not a resource.
  const adminListRuns = {
    operationId: 'adminListRuns',
    summary: 'List runs, newest first',
    querystring: RunListQuery,
    response: { 200: ref(RunPage) },
  };
  app.get('/runs', { schema: adminListRuns }, async (req) => {
    const q = req.query;
    return listRunsPage(app.ctx, {
      agentId: queryInt(q.agent_id, 'agent_id', 1, Number.MAX_SAFE_INTEGER),
      status: q.status,
      source: q.source,
      createdFrom: q.created_from,
      createdTo: q.created_to,
      externalRunId: q.external_run_id,
      createdBy: q.created_by,
      limit: queryInt(q.limit, 'limit', 1, PAGE_MAX),
      cursor: q.cursor,
      scope: orgScope(req.principal!),
    });
  });

  const adminGetRun = {
    operationId: 'adminGetRun',
    summary: 'Read a run with its input, output, attribution, wait state, timeline and replay links',
    params: RunParams,
    response: { 200: ref(AdminRunDetail) },
    errors: ['not_found'] as const,
  };
  app.get('/runs/:runId', { schema: adminGetRun }, async (req) => getRunView(app.ctx, numericId(req.params.runId, 'run')));
}
