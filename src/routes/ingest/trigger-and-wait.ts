// POST /api/agents/{agentId}/runs/trigger-and-wait (spec 4.2). The ingest-key hook of this context has
// authenticated the caller (req.agent) and counted the per-agent rate limit (spec 8.1: 5/min).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { TimeoutMsSchema } from '../../sync/wait-window.ts';
import { triggerAndWait } from '../../sync/trigger-and-wait.ts';
import { callerGoneSignal } from '../../http/caller-gone.ts';
import { emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { IdempotencyKeyHeaders, idempotencyOf } from '../../http/idempotency-key.ts';
import { sendSyncOutcome } from '../../http/start-answers.ts';
import { CALLER_GONE, ref, SyncCompleted, SyncTimedOut } from '../../schemas/responses.ts';

const Body = Type.Object(
  {
    input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    // As /trigger: an unknown, non-member or malformed value is dropped silently (spec 4.2 "Attribution").
    userId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    timeoutMs: Type.Optional(TimeoutMsSchema),
  },
  { additionalProperties: true },
);

export default async function triggerAndWaitRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/trigger-and-wait',
    {
      schema: {
        operationId: 'triggerAndWait',
        summary: 'Start a run and hold the answer until it ends or the wait window does',
        description: 'Spec 4.2, 8.3. A workflow run whose runtime shows no sign of life within the window is failed (504).',
        body: Body,
        headers: IdempotencyKeyHeaders,
        response: { 200: ref(SyncCompleted), 202: ref(SyncTimedOut), 204: CALLER_GONE },
        errors: ['not_eligible', 'agent_unavailable', 'rate_limited', 'runtime_failed', 'runtime_timeout', 'invalid_header', 'idempotency_key_reused'],
      },
      // Part 7 lists 422 (not 400) among this endpoint's errors: validation failures answer 422.
      config: { rateLimit: { bucket: 'trigger-and-wait', limit: LIMITS.triggerAndWait, inWrite: true }, validationCode: 'validation_failed' },
      preValidation: emptyBodyAsObject,
    },
    async (req, reply) => {
      const { input, userId, timeoutMs } = req.body;
      const idempotency = idempotencyOf(req, { input, userId, timeoutMs });
      const callerGone = callerGoneSignal(reply);
      const outcome = await triggerAndWait(app.ctx, 'trigger_and_wait', { agent: req.agent!, input, userId, timeoutMs, callerGone, guard: req.rateGuard, idempotency });
      return sendSyncOutcome(app.ctx, reply, outcome, { timeoutMs, signal: callerGone });
    },
  );
}
