// POST /api/agents/{agentId}/runs/ingest (spec 4.5): lifecycle reports of a standalone agent. The ingest-key hook
// of this context has authenticated the caller (req.agent) and counted the per-agent rate limit (spec 8.1).
// Spec part 7 lists no validation status for /ingest; a bad body is the default 400 invalid_body.
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { assertPathSafeExternalRunId } from '../../http/external-run-id.ts';
import { parseEventTimestamp } from '../../lib/timestamps.ts';
import { ingestRun } from '../../runs/ingest-run.ts';
import { IngestResult, ref } from '../../schemas/responses.ts';

// RFC 3339, the ISO 8601 profile with a mandatory offset: a time without one would be read in the server's zone.
const Timestamp = Type.String({ format: 'date-time' });

const Body = Type.Object(
  {
    externalRunId: Type.String({ minLength: 1, maxLength: 255 }), // spec 8.4
    status: Type.Enum(['queued', 'running', 'completed', 'failed', 'cancelled']),
    startedAt: Type.Optional(Timestamp),
    completedAt: Type.Optional(Timestamp),
    durationMs: Type.Optional(Type.Number({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER })),
    output: Type.Optional(Type.Object({}, { additionalProperties: true })),
    // Spec 2.2: a value that is not a non-negative integer is silently dropped, not rejected.
    outputs: Type.Optional(Type.Unknown()),
    error: Type.Optional(Type.String({ maxLength: 4096 })), // spec 8.4
    metadata: Type.Optional(Type.Object({}, { additionalProperties: true })),
    // Not format-checked: a string that is no member's uuid is dropped silently (spec 4.5).
    userId: Type.Optional(Type.Union([Type.String(), Type.Null()])),
  },
  { additionalProperties: true },
);

/**
 * The format check lets through what a timestamptz cannot take (year 0000, a leap second), and a time far ahead of
 * ours: lib/timestamps.ts.
 */
function toDate(field: string, value: string | undefined, now: Date): Date | undefined {
  if (value === undefined) return undefined;
  const parsed = parseEventTimestamp(value, now);
  if ('problem' in parsed) throw errors.invalid(`body.${field}`, parsed.problem);
  return parsed.date;
}

export default async function ingestRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/ingest',
    {
      schema: {
        operationId: 'ingestRun',
        summary: 'Record a lifecycle report of a standalone agent',
        description: 'Spec 4.5. Repeats with the same externalRunId update the run; a backward move is 409.',
        body: Body,
        response: { 200: ref(IngestResult) },
        errors: ['not_eligible', 'backward_transition', 'rate_limited'],
      },
      config: { rateLimit: { bucket: 'ingest', limit: LIMITS.ingest } },
    },
    async (req) => {
      const body = req.body;
      assertPathSafeExternalRunId(body.externalRunId, 'invalid_body');
      const result = await ingestRun(app.ctx, req.agent!, {
        ...body,
        startedAt: toDate('startedAt', body.startedAt, app.ctx.clock.now()),
        completedAt: toDate('completedAt', body.completedAt, app.ctx.clock.now()),
      });
      if (result.kind === 'backward') throw errors.backwardTransition(result.run.id, result.run.status, body.status);
      return { runId: result.run.id, status: result.kind };
    },
  );
}
