// admin-api.md "Runs and audit": list and read runs (cancel and logs live in their own modules).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { RUN_STATUSES } from '../../runs/run-states.ts';
import { getRunView, listRunsPage, RUN_PAGE_MAX } from '../../admin/runs.ts';
import { numericId, queryInt } from './params.ts';
import { DigitsParam } from './schemas.ts';

const RunListQuery = Type.Object({
  agent_id: Type.Optional(DigitsParam),
  status: Type.Optional(Type.Enum([...RUN_STATUSES])),
  limit: Type.Optional(Type.String({ maxLength: 16 })),
  cursor: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
});
const RunParams = Type.Object({ runId: Type.String() });

export default async function runReadRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  // An agent_id nobody has filters to an empty page: a filter is not a resource.
  app.get('/runs', { schema: { querystring: RunListQuery } }, async (req) => {
    const q = req.query;
    return listRunsPage(app.ctx, {
      agentId: queryInt(q.agent_id, 'agent_id', 1, Number.MAX_SAFE_INTEGER),
      status: q.status,
      limit: queryInt(q.limit, 'limit', 1, RUN_PAGE_MAX),
      cursor: q.cursor,
    });
  });

  app.get('/runs/:runId', { schema: { params: RunParams } }, async (req) => getRunView(app.ctx, numericId(req.params.runId, 'run')));
}
