// POST /api/runs/{runId}/waitpoint (spec 4.9): resumes a run paused by a `waiting` callback. The agent-key hook
// of this context has already authenticated the caller (req.agent) and counted the shared rate limit (spec 8.1).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { allowEmptyJsonBody, emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { completeWaitpoint } from '../../runs/waitpoint.ts';
import { ref, WaitpointCompleted } from '../../schemas/responses.ts';

const Body = Type.Object(
  {
    payload: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    // Not format-checked: a value that is no member's uuid is dropped silently either way (spec 4.9).
    userId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true },
);

export default async function waitpointRoute(app: FastifyInstance): Promise<void> {
  allowEmptyJsonBody(app);
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/runs/:runId/waitpoint',
    {
      schema: {
        operationId: 'completeWaitpoint',
        summary: 'Resume a run paused by a waiting callback',
        description: 'Spec 4.9. The token is the one the run is waiting on; an empty body completes it with no payload. An unknown run is the same 401 as a bad key.',
        params: Type.Object({ runId: Type.String() }),
        body: Body,
        response: { 200: ref(WaitpointCompleted) },
        errors: ['waitpoint_unavailable', 'rate_limited'],
      },
      config: { rateLimit: { bucket: 'runtime-calls', limit: LIMITS.callbackAndWaitpoint } },
      // Spec 4.9: "an empty body is valid" — no body, `{}` and a zero-length JSON body alike.
      preValidation: emptyBodyAsObject,
    },
    async (req) => {
      const runId = parseId(req.params.runId);
      // Spec part 7: an unknown run (or another agent's) is the same 401 as a bad key.
      if (runId === null) throw errors.unauthorized('unknown run for this agent key');
      const result = await completeWaitpoint(app.ctx, {
        agent: req.agent!,
        runId,
        payload: (req.body.payload ?? null) as Record<string, unknown> | null,
        actorUserId: req.body.userId ?? null,
        via: 'agent_key',
      });
      if (result.kind === 'not_found') throw errors.unauthorized('unknown run for this agent key');
      if (result.kind === 'conflict') throw new ApiError('waitpoint_unavailable', result.message, { runId });
      return { ok: true as const };
    },
  );
}
