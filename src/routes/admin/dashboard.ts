// Issue 14: GET /dashboard — runs by status and outputs per UTC day, runs and outputs per agent, and totals for a period.
import type { FastifyInstance } from 'fastify';
import { orgScope } from '../../orgs/principal.ts';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { dashboard } from '../../admin/dashboard.ts';
import { RUN_STATUSES } from '../../runs/run-states.ts';
import { queryInt } from './params.ts';
import { DigitsParam, Uuid } from './schemas.ts';

const DashboardQuery = Type.Object({
  from: Type.Optional(Type.String({ maxLength: 64 })),
  to: Type.Optional(Type.String({ maxLength: 64 })),
  org_id: Type.Optional(Uuid),
  agent_id: Type.Optional(DigitsParam),
});

const Day = Type.String({ pattern: '^[0-9]{4}-[0-9]{2}-[0-9]{2}$' });
const Count = Type.Integer({ minimum: 0 });
const DashboardBody = Type.Object({
  from: Type.String({ format: 'date-time' }),
  to: Type.String({ format: 'date-time' }),
  runs_by_status: Type.Array(Type.Object({ day: Day, status: Type.Enum([...RUN_STATUSES]), count: Count })),
  outputs_by_day: Type.Array(Type.Object({ day: Day, outputs: Count })),
  by_agent: Type.Array(Type.Object({ agentId: Type.Integer(), runs: Count, outputs: Count }), {
    description: 'Every agent with a run in the period, most outputs first (then most runs, then agent id). One agent per day: filter by agent_id and read outputs_by_day.',
  }),
  totals: Type.Object({
    runs: Count,
    outputs: Count,
    by_status: Type.Object(Object.fromEntries(RUN_STATUSES.map((s) => [s, Count]))),
  }),
});

export default async function dashboardRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.get('/dashboard', { schema: { operationId: 'adminDashboard', summary: 'Runs by status and outputs per day, runs and outputs per agent, with totals', description: "Runs count on the UTC day they were created. Closed days are exact; today's runs created before the last rollup refresh (every minute) count with their status and outputs as of that refresh, so today's figures can lag by a minute or two.", querystring: DashboardQuery, response: { 200: DashboardBody } } }, async (req) => {
    const q = req.query;
    return dashboard(app.ctx, { from: q.from, to: q.to, orgId: q.org_id, agentId: queryInt(q.agent_id, 'agent_id', 1, Number.MAX_SAFE_INTEGER), scope: orgScope(req.principal!) });
  });
}
