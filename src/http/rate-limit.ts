// Spec 8.1 at the HTTP edge: where a request is counted, its RateLimit-* headers and its 429.
//
// Every authenticated request of a limited route counts. A route whose work is one run write (starting a run, a
// callback) declares `inWrite` and passes `req.rateCount` to that write, which counts the request in its own
// statement (CountedWrite: one round trip and one commit instead of two). Every other route counts up front. A
// request refused before it reaches its write (400, 403, 422 …) is counted right after its answer, so it still
// uses up the bucket and a caller over its limit is answered 429 from memory from then on.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { DeferredCount, RateDecision } from '../rate-limits/rate-limiter.ts';
import { errors, type ApiError } from '../errors.ts';
import { sendError } from './error-handler.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's count when it rides on the request's write: hand it to that write (null otherwise). */
    rateCount: DeferredCount | null;
  }
}

export interface RouteRateLimit {
  /** The per-minute limit (spec 8.1's table, LIMITS). */
  limit: number;
  /** Counted inside the run write the handler passes `req.rateCount` to. */
  inWrite?: boolean;
}

/**
 * Counts the request against `key` (or arranges for its write to). Over the limit it answers the 429 itself and
 * returns true: the hook then returns `reply`, which ends the request. (A hook that threw instead would go through
 * Fastify's error path, a measurable share of the cost of a 429 — and a caller over its limit should cost little.)
 * A count made later by the request's write throws its 429 from there.
 */
export async function limitRequest(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, key: string, rl: RouteRateLimit): Promise<boolean> {
  const limiter = app.ctx.limiter;
  let decision: RateDecision;
  if (rl.inWrite && limiter.defer) {
    const deferred = limiter.defer(key, rl.limit, (d) => {
      const refusal = answer(reply, d);
      if (refusal) throw refusal;
    });
    if (!('allowed' in deferred)) {
      req.rateCount = deferred;
      return false;
    }
    decision = deferred;
  } else {
    decision = await limiter.hit(key, rl.limit);
  }
  const refusal = answer(reply, decision);
  if (refusal) sendError(reply, refusal);
  return refusal !== null;
}

/** Once per app: the count of a request that never reached its write, made after the answer. */
export function countRefusedRequests(app: FastifyInstance): void {
  app.decorateRequest('rateCount', null);
  app.addHook('onResponse', (req, _reply, done) => {
    const count = req.rateCount;
    // hit() fails open and reports store errors itself; nothing here can fail the (already sent) answer.
    if (count && !count.settled) {
      app.ctx.limiter.hit(count.key, count.limit).catch((err: unknown) => req.log.error({ err }, 'counting a refused request failed'));
    }
    done();
  });
}

/** Sets the RateLimit-* headers; returns the 429 to answer when the request is over the limit. */
function answer(reply: FastifyReply, d: RateDecision): ApiError | null {
  reply.header('ratelimit-limit', String(d.limit));
  reply.header('ratelimit-remaining', String(d.remaining));
  reply.header('ratelimit-reset', String(d.resetSeconds));
  return d.allowed ? null : errors.rateLimited(d.resetSeconds);
}
