// POST /api/agents/{agentId}/runs/trigger (spec 4.1): starts a run and answers at once. The ingest-key hook of
// this context has authenticated the caller (req.agent) and counted the per-agent rate limit (spec 8.1).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { TRIGGER_RATE_LIMIT } from '../../http/rate-limit.ts';
import { triggerRun } from '../../runs/begin-run.ts';
import { emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { IdempotencyKeyHeaders, idempotencyOf } from '../../http/idempotency-key.ts';
import { sendStarted } from '../../http/start-answers.ts';
import { ref, TriggerAccepted } from '../../schemas/responses.ts';

const Body = Type.Object(
  {
    input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    // Not format-checked: an unknown or non-member value is dropped silently (spec 4.1), a malformed one too.
    userId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true },
);

export default async function triggerRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/trigger',
    {
      schema: {
        operationId: 'triggerRun',
        summary: 'Start a run and answer at once',
        description: 'Spec 4.1. The body may be left out: the run gets the agent’s default input.',
        body: Body,
        headers: IdempotencyKeyHeaders,
        response: { 201: ref(TriggerAccepted) },
        errors: ['not_eligible', 'agent_unavailable', 'rate_limited', 'runtime_failed', 'invalid_header', 'idempotency_key_reused'],
      },
      config: { rateLimit: TRIGGER_RATE_LIMIT },
      // Both fields are optional, so a request without a body is a trigger with the default input.
      preValidation: emptyBodyAsObject,
    },
    async (req, reply) => {
      const idempotency = idempotencyOf(req, { input: req.body.input, userId: req.body.userId });
      const { input, userId } = req.body;
      return sendStarted(reply, await triggerRun(app.ctx, 'trigger', { agent: req.agent!, input, userId, guard: req.rateGuard, idempotency }));
    },
  );
}
