// POST /api/agents/{agentId}/runs/trigger-and-download (spec 4.3). The ingest-key hook of this context has
// authenticated the caller (req.agent) and counted the per-agent rate limit (spec 8.1: 5/min).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { callerGoneSignal } from '../../http/caller-gone.ts';
import { TimeoutMsSchema } from '../../sync/wait-window.ts';
import { triggerAndDownload } from '../../sync/download-run.ts';
import { emptyBodyAsObject } from '../../http/empty-json-body.ts';
import { IdempotencyKeyHeaders, idempotencyOf } from '../../http/idempotency-key.ts';
import { sendDownload } from '../../http/start-answers.ts';
import { CALLER_GONE, DOWNLOAD } from '../../schemas/responses.ts';

const Body = Type.Object(
  {
    input: Type.Optional(Type.Object({}, { additionalProperties: true })),
    // As /trigger: an unknown, non-member or malformed value is dropped silently.
    userId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    timeoutMs: Type.Optional(TimeoutMsSchema),
  },
  { additionalProperties: true },
);

export default async function triggerAndDownloadRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/trigger-and-download',
    {
      // Part 7: an invalid body is 400 here (the default validation code).
      schema: {
        operationId: 'triggerAndDownload',
        summary: 'Start a run and stream the file its runtime answers',
        description: 'Spec 4.3. `timeoutMs` bounds the wait for the first byte; there is no 202. The file is never stored.',
        body: Body,
        headers: IdempotencyKeyHeaders,
        response: { 200: DOWNLOAD, 204: CALLER_GONE },
        errors: ['not_eligible', 'agent_unavailable', 'rate_limited', 'runtime_failed', 'run_failed', 'runtime_timeout', 'invalid_header', 'idempotency_key_reused', 'download_not_replayable'],
      },
      config: { rateLimit: { bucket: 'trigger-and-download', limit: LIMITS.triggerAndDownload, inWrite: true } },
      preValidation: emptyBodyAsObject,
    },
    async (req, reply) => {
      const { input, userId, timeoutMs } = req.body;
      const idempotency = idempotencyOf(req, { input, userId, timeoutMs });
      const callerGone = callerGoneSignal(reply);
      return sendDownload(reply, await triggerAndDownload(app.ctx, 'download', { agent: req.agent!, input, userId, timeoutMs, callerGone, guard: req.rateGuard, idempotency }));
    },
  );
}
