// Idempotency-Key at the HTTP edge (issue 13; decisions.md "Idempotency keys"): reading the header, and keeping the
// claiming request's first answer. The claim itself is made by the run's insert (runs/idempotency.ts); a request
// whose key is held is answered by the start answers (start-answers.ts), which also mark which answers are the
// run's own and so kept.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { Type } from 'typebox';
import { requestFingerprint, storeAnswer, type IdempotencyRequest } from '../runs/idempotency.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /**
     * This request's Idempotency-Key (idempotencyOf); `replayed` once it is answered as a replay, `runAnswer` once
     * its answer is the run's own (start-answers.ts) and so kept for a retry.
     */
    idempotency: { agentId: number; request: IdempotencyRequest; replayed: boolean; runAnswer: boolean } | null;
  }
}

/**
 * The header as the routes that take it declare it (`schema.headers`: validation and the OpenAPI document from one
 * source; a malformed key is 400 invalid_header naming it). An opaque token of 1-255 visible ASCII characters, no
 * spaces: a UUID is typical. A repeated header arrives joined by ", " and is refused.
 */
export const IdempotencyKeyHeaders = Type.Object(
  {
    'idempotency-key': Type.Optional(
      Type.String({ minLength: 1, maxLength: 255, pattern: '^[!-~]+$', description: 'A retry with the same key and body starts no second run; its first answer is replayed (24 h by default).' }),
    ),
  },
  { additionalProperties: true },
);

/** On every answer a replay gets (the name Stripe uses): this request started nothing. */
export const REPLAYED_HEADER = 'idempotent-replayed';

/**
 * The request's Idempotency-Key (null without one; its route's schema has checked it), with the fingerprint of its
 * route and of `fields`, the body fields that change what it does (a field sent as null counts as absent).
 */
export function idempotencyOf(req: FastifyRequest, fields: Record<string, unknown>): IdempotencyRequest | null {
  const key = req.headers['idempotency-key'];
  if (typeof key !== 'string') return null;
  const endpoint = req.routeOptions.url ?? req.url;
  const present = Object.fromEntries(Object.entries(fields).filter(([, v]) => v !== undefined && v !== null));
  const request = { key, endpoint, fingerprint: requestFingerprint(endpoint, present) };
  req.idempotency = { agentId: req.agent!.id, request, replayed: false, runAnswer: false };
  return request;
}

/**
 * For the contexts whose routes take the key: stores the answer of the request that claimed its key, before it is
 * sent, so that a retry that follows it gets the same. Not stored (a retry is answered from the run instead): a
 * streamed file, an answer whose caller had already left, and any other refusal or failure — a 429 started nothing,
 * a 503 or a surprise's 500 says nothing final about the run (which may exist and be fine).
 */
export function rememberIdempotentAnswers(app: FastifyInstance): void {
  app.decorateRequest('idempotency', null);
  app.addHook('onSend', (req, reply, payload, done) => {
    const call = req.idempotency;
    // Only a run's own answer, as the bytes sent (a streamed file is no string), to a caller still there.
    if (!call?.runAnswer || call.replayed || typeof payload !== 'string' || reply.raw.destroyed) return done(null, payload);
    storeAnswer(app.ctx, call.agentId, call.request, reply.statusCode, payload).then(
      () => done(null, payload),
      (err: unknown) => {
        req.log.warn({ err }, 'the answer to an Idempotency-Key was not stored; a retry is answered from its run');
        done(null, payload);
      },
    );
  });
}
