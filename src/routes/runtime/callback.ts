// POST /api/runs/{runId}/callback (spec 4.8). The agent-key hook of this context has authenticated the caller
// (req.agent) and counted the rate limit it shares with /waitpoint (spec 8.1). 200 with an empty body; a body that
// fails validation is 422, except a malformed `url` on `waiting`, which is 400 (spec 4.8, part 7).
import type { FastifyInstance } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type, type Static } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { parseId } from '../../http/bearer.ts';
import { LIMITS } from '../../rate-limits/rate-limiter.ts';
import { applyCallback, type CallbackError, type CallbackRequest } from '../../runs/callback.ts';
import { outputsCount } from '../../runs/run-output.ts';
import { overLimit } from '../../http/rate-limit.ts';
import { noBody } from '../../schemas/responses.ts';

// One flat object rather than a oneOf: ajv then names the offending field instead of "must match one schema".
// The per-type rules (required fields, complete vs failed) are checked in toCallback.
const Body = Type.Object(
  {
    type: Type.Enum(['started', 'output', 'waiting']),
    output: Type.Optional(Type.Union([Type.Object({}, { additionalProperties: true }), Type.Null()])),
    outputs: Type.Optional(Type.Unknown()), // spec 4.8: a value that is not a non-negative integer is dropped
    complete: Type.Optional(Type.Boolean()),
    failed: Type.Optional(Type.Boolean()),
    error: Type.Optional(
      Type.Union([
        Type.Object(
          { name: Type.Optional(Type.String()), message: Type.Optional(Type.String()), stack: Type.Optional(Type.String()) },
          { additionalProperties: true },
        ),
        Type.Null(),
      ]),
    ),
    tokenId: Type.Optional(Type.String({ minLength: 1 })),
    description: Type.Optional(Type.String()),
    url: Type.Optional(Type.Unknown()), // checked in toCallback: a malformed one is 400, not 422
  },
  { additionalProperties: true },
);
type Body = Static<typeof Body>;

const MAX_URL_LENGTH = 2048;

const invalid = (field: string, problem: string) => errors.invalid(`body.${field}`, problem, 'validation_failed');

/** Spec 4.8's per-type rules on top of the schema. Fields another type would use are ignored. */
function toCallback(body: Body): CallbackRequest {
  const output = body.output ?? undefined;
  switch (body.type) {
    case 'started':
      return { type: 'started' };
    case 'output': {
      if (body.complete === true && body.failed === true) throw invalid('failed', 'cannot be true together with complete');
      const outputs = outputsCount(body.outputs);
      if (body.failed === true) {
        if (!body.error) throw invalid('error', 'is required when failed is true');
        // Only the three fields of spec 2.2's error object are stored.
        const { name, message, stack } = body.error;
        const error: CallbackError = { ...(name !== undefined && { name }), ...(message !== undefined && { message }), ...(stack !== undefined && { stack }) };
        return { type: 'output', outcome: 'failed', output, outputs, error };
      }
      return { type: 'output', outcome: body.complete === true ? 'completed' : 'intermediate', output, outputs };
    }
    case 'waiting':
      if (body.tokenId === undefined) throw invalid('tokenId', 'is required for type waiting');
      if (body.description === undefined) throw invalid('description', 'is required for type waiting');
      return { type: 'waiting', tokenId: body.tokenId, description: body.description, url: absoluteHttpUrl(body.url), output: output ?? null };
  }
}

/** Spec 4.8: an absolute http(s) URL, else 400 invalid_url. Stored normalized (it becomes `{{run_url}}`). */
function absoluteHttpUrl(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  const bad = () => new ApiError('invalid_url', `body.url must be an absolute http(s) URL of at most ${MAX_URL_LENGTH} characters`);
  if (typeof value !== 'string' || value.length > MAX_URL_LENGTH) throw bad();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw bad();
  }
  if ((url.protocol !== 'http:' && url.protocol !== 'https:') || url.hostname === '' || url.href.length > MAX_URL_LENGTH) throw bad();
  return url.href;
}

export default async function callbackRoute(app: FastifyInstance): Promise<void> {
  app.withTypeProvider<TypeBoxTypeProvider>().post(
    '/runs/:runId/callback',
    {
      schema: {
        operationId: 'postCallback',
        summary: 'Report progress, output, completion, failure or a pause of a running task',
        description: 'Spec 4.8. `type` picks the fields that count: `output` (with `complete` or `failed` + `error`), or `waiting` (`tokenId`, `description`, optional `url` and `output`).',
        params: Type.Object({ runId: Type.String() }),
        body: Body,
        response: { 200: noBody('Recorded (or a repeat that changed nothing); the body is empty.') },
        errors: ['invalid_url', 'not_found', 'backward_transition', 'waitpoint_unavailable', 'rate_limited'],
      },
      config: { validationCode: 'validation_failed', rateLimit: { bucket: 'runtime-calls', limit: LIMITS.callbackAndWaitpoint, inWrite: true } },
    },
    async (req, reply) => {
      const runId = parseId(req.params.runId);
      if (runId === null) throw errors.notFound('run');
      const result = await applyCallback(app.ctx, req.agent!, runId, toCallback(req.body), req.rateGuard);
      switch (result.kind) {
        case 'over_limit':
          throw overLimit(result);
        case 'ok':
          return reply.code(200).send();
        case 'not_found':
          throw errors.notFound('run');
        case 'backward':
          throw errors.backwardTransition(result.run.id, result.run.status, result.to);
        case 'waitpoints_unsupported':
          throw new ApiError('waitpoint_unavailable', 'this agent has no runtime that supports waitpoints', { runId });
      }
    },
  );
}
