// Issue 14: POST /runs/{runId}/replay starts the run again (admin/run-replay.ts). It counts against the agent's
// /trigger limit (spec 8.1) in the new run's insert, as /trigger does, and answers as /trigger does when the
// runtime refuses (500 naming the new run).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { limitRequest, overLimit, TRIGGER_RATE_LIMIT } from '../../http/rate-limit.ts';
import { isOverLimit } from '../../rate-limits/rate-guard.ts';
import { findReplaySource, replayRun } from '../../admin/run-replay.ts';
import { numericId } from './params.ts';
import { AdminRun } from '../../schemas/responses.ts';

const RunParams = Type.Object({ runId: Type.String() });
const Replay = Type.Object({ ...AdminRun.properties, replay_of: Type.Integer({ minimum: 1 }) }, { additionalProperties: false });

export default async function runReplayRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();

  app.post('/runs/:runId/replay', { schema: { operationId: 'adminReplayRun', summary: 'Start a run again with the same input (a new run, linked both ways)', params: RunParams, response: { 201: Replay }, errors: ['not_found', 'conflict', 'not_eligible', 'agent_unavailable', 'rate_limited', 'runtime_failed'] } }, async (req, reply) => {
    const source = await findReplaySource(app.ctx, numericId(req.params.runId, 'run'));
    if (await limitRequest(app, req, reply, TRIGGER_RATE_LIMIT, { agentId: source.agent.id })) return reply;
    const result = await replayRun(app.ctx, source, req.rateGuard, req.principal!.userId);
    if (isOverLimit(result)) throw overLimit(result);
    if (!result.ok) throw errors.runtimeFailed(result.runId, result.reason);
    return reply.code(201).send(result.run);
  });
}
