// POST /api/zones/agents/{agentId}/runs/{runId}/waitpoint (spec 4.9's zone sibling, zones.md): the same
// completion as the agent-key endpoint, audited with the token's user. 20/min per user and agent (spec 8.1).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { completeWaitpoint } from '../../runs/waitpoint.ts';
import { emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { ref, WaitpointCompleted } from '../../schemas/responses.ts';

const Body = Type.Object(
  { payload: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])) },
  { additionalProperties: true },
);

export default async function zoneWaitpointRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/runs/:runId/waitpoint',
    {
      schema: {
        operationId: 'zoneCompleteWaitpoint',
        summary: 'Resume a waiting run for the token’s user (as spec 4.9)',
        description: 'An empty body completes the waitpoint with no payload; a run of another agent is 404.',
        params: Type.Object({ agentId: Type.String(), runId: Type.String() }),
        body: Body,
        response: { 200: ref(WaitpointCompleted) },
        errors: ['not_found', 'waitpoint_unavailable', 'rate_limited'],
      },
      config: { rateLimit: { bucket: 'zone-waitpoint', limit: LIMITS.zoneWaitpoint, per: 'user_agent' } },
      // As spec 4.9: an empty body is valid and completes the waitpoint with no payload.
      preValidation: emptyBodyAsObject,
    },
    async (req) => {
      const runId = parseId(req.params.runId);
      if (runId === null) throw errors.notFound('run');
      const result = await completeWaitpoint(app.ctx, {
        agent: req.agent!,
        runId,
        payload: (req.body.payload ?? null) as Record<string, unknown> | null,
        actorUserId: req.zoneUserId,
        via: 'zone',
      });
      // zones.md: a run of another agent is 404 here (the agent-key endpoint answers 401).
      if (result.kind === 'not_found') throw errors.notFound('run');
      if (result.kind === 'conflict') throw new ApiError('waitpoint_unavailable', result.message, { runId });
      return { ok: true as const };
    },
  );
}
