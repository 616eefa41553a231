// Issue 14: the console starts runs and resumes waiting ones for the signed-in user.
//   POST /agents/{id}/runs        as spec 4.1 (input merged over the agent's default_input), source `console`,
//                                 created_by the user; counted against the agent's /trigger limit (spec 8.1)
//   POST /runs/{runId}/waitpoint  as spec 4.9, the user recorded on the audit entry (run.waitpoint_completed)
// Started through the one start pipeline (runs/begin-run.ts, front `console`): as /trigger, except that the console
// is part of the platform, like a zone app, so allow_external_triggers (a gate for callers outside the platform)
// does not apply; the agent must still be platform-managed and active.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { limitRequest, TRIGGER_RATE_LIMIT } from '../../http/rate-limit.ts';
import { sendStarted } from '../../http/start-answers.ts';
import { assertEligible, triggerRun } from '../../runs/begin-run.ts';
import { completeWaitpoint } from '../../runs/waitpoint.ts';
import { findRun } from '../../runs/runs-repo.ts';
import { JsonObject, ref, TriggerAccepted, WaitpointCompleted } from '../../schemas/responses.ts';
import { numericId } from './params.ts';

const AgentParams = Type.Object({ id: Type.String() });
const RunParams = Type.Object({ runId: Type.String() });
const StartBody = Type.Object({ input: Type.Optional(JsonObject) }, { additionalProperties: false });
const ResumeBody = Type.Object(
  { payload: Type.Optional(Type.Union([JsonObject, Type.Null()], { description: 'The waitpoint result handed to the task; absent or null: none.' })) },
  { additionalProperties: false },
);

export default async function runStartRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  const adminTriggerRun = {
    operationId: 'adminTriggerRun',
    summary: 'Start a run of the agent for the signed-in user (as spec 4.1)',
    params: AgentParams,
    body: StartBody,
    response: { 201: ref(TriggerAccepted) },
    errors: ['not_found', 'not_eligible', 'rate_limited', 'runtime_failed'] as const,
  };
  app.post('/agents/:id/runs', { schema: adminTriggerRun }, async (req, reply) => {
    const agent = await app.ctx.agents.get(numericId(req.params.id, 'agent'));
    if (!agent) throw errors.notFound('agent');
    assertEligible(agent, 'console'); // before the limit: an ineligible agent is 403, never 429
    if (await limitRequest(app, req, reply, TRIGGER_RATE_LIMIT, { agentId: agent.id })) return reply;
    return sendStarted(reply, await triggerRun(app.ctx, 'console', { agent, input: req.body.input, userId: req.principal!.userId, guard: req.rateGuard }));
  });

  const adminCompleteWaitpoint = {
    operationId: 'adminCompleteWaitpoint',
    summary: 'Resume a waiting run for the signed-in user (as spec 4.9)',
    description: 'An empty body completes the waitpoint with no payload. Audited as `run.waitpoint_completed` with the user.',
    params: RunParams,
    body: ResumeBody,
    response: { 200: ref(WaitpointCompleted) },
    errors: ['not_found', 'waitpoint_unavailable'] as const,
  };
  app.post('/runs/:runId/waitpoint', { schema: adminCompleteWaitpoint }, async (req) => {
    const runId = numericId(req.params.runId, 'run');
    const run = await findRun(app.ctx.db, runId);
    const agent = run && (await app.ctx.agents.get(Number(run.agent_id)));
    if (!agent) throw errors.notFound('run');
    const result = await completeWaitpoint(app.ctx, {
      agent,
      runId,
      payload: req.body.payload ?? null,
      actorUserId: req.principal!.userId,
      via: 'console',
    });
    if (result.kind === 'not_found') throw errors.notFound('run');
    if (result.kind === 'conflict') throw new ApiError('waitpoint_unavailable', result.message, { runId });
    return { ok: true as const };
  });
}
