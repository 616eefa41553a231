// POST /api/agents/{agentId}/runs/register (spec 4.4): records a run the caller started on the runtime directly
// and returns its credentials token. The ingest-key hook of this context has authenticated the caller
// (req.agent) and counted the per-agent rate limit (spec 8.1). Validation failures are 422 (spec part 7).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { registerRun } from '../../runs/register-run.ts';
import { assertPathSafeExternalRunId } from '../../http/external-run-id.ts';
import { ref, RegisterAccepted } from '../../schemas/responses.ts';

const Body = Type.Object(
  {
    externalRunId: Type.String({ minLength: 1, maxLength: 255 }), // spec 8.4
    input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
    // Not format-checked: a string that is no member's uuid is dropped silently (spec 4.4); another type is a 422.
    userId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true },
);

export default async function registerRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/register',
    {
      schema: {
        operationId: 'registerRun',
        summary: 'Register a run the caller started on the runtime itself',
        description: 'Spec 4.4. Idempotent on (agent, externalRunId): a repeat answers the same run and token.',
        body: Body,
        response: { 201: ref(RegisterAccepted) },
        errors: ['not_eligible', 'rate_limited'],
      },
      config: { validationCode: 'validation_failed', rateLimit: { bucket: 'register', limit: LIMITS.register } },
    },
    async (req, reply) => {
      assertPathSafeExternalRunId(req.body.externalRunId, 'validation_failed');
      const result = await registerRun(app.ctx, req.agent!, req.body);
      return reply.code(201).send({ runId: result.run.id, ...result.credentials });
    },
  );
}
