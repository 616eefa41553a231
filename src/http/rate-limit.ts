// Spec 8.1 at the HTTP edge: where a request is counted, its RateLimit-* headers and its 429.
//
// Every authenticated request of a limited route counts. A route whose work is one run write (starting a run, a
// callback) declares `inWrite` and hands `req.rateGuard` to the service, whose write counts the request in its own
// statement (rate-guard.ts: one round trip and one commit instead of two); over the limit the service returns
// OverLimit and the route answers `overLimit(result)`. Every other route counts up front. A request refused before
// it reaches its write (400, 403, 422 …) is counted right after its answer, so it still uses up the bucket and a
// caller over its limit is answered 429 from memory from then on.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { RateDecision } from '../rate-limits/rate-limiter.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import { errors, type ApiError } from '../errors.ts';
import { sendError } from './error-handler.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's count when it rides on the request's write: hand it to the service (null otherwise). */
    rateGuard: RateGuard | null;
  }
}

/** Spec 8.1: the key of an agent's bucket (`trigger`, `callback` …), whichever credential the request came with. */
export const agentBucket = (bucket: string, agentId: number): string => `${bucket}:agent:${agentId}`;

export interface RouteRateLimit {
  /** The per-minute limit (spec 8.1's table, LIMITS). */
  limit: number;
  /** Counted inside the run write the handler hands `req.rateGuard` to. */
  inWrite?: boolean;
}

/**
 * Counts the request against `key` (or arranges for its write to). Over the limit it answers the 429 itself and
 * returns true: the hook then returns `reply`, which ends the request. (A hook that threw instead would go through
 * Fastify's error path, a measurable share of the cost of a 429 — and a caller over its limit should cost little.)
 * A count made later by the request's write sets the headers when it is made; over the limit the service returns
 * OverLimit, answered with `overLimit()`.
 */
export async function limitRequest(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, key: string, rl: RouteRateLimit): Promise<boolean> {
  const limiter = app.ctx.limiter;
  let decision: RateDecision;
  if (rl.inWrite && limiter.guard) {
    const guard = limiter.guard(key, rl.limit, (d) => void answer(reply, d));
    if (!('allowed' in guard)) {
      req.rateGuard = guard;
      return false;
    }
    decision = guard;
  } else {
    decision = await limiter.hit(key, rl.limit);
  }
  const refusal = answer(reply, decision);
  if (refusal) sendError(reply, refusal);
  return refusal !== null;
}

/** Once per app: the count of a request that never reached its write, made after the answer. */
export function countRefusedRequests(app: FastifyInstance): void {
  app.decorateRequest('rateGuard', null);
  app.addHook('onResponse', (req, _reply, done) => {
    const count = req.rateGuard;
    // hit() fails open and reports store errors itself; nothing here can fail the (already sent) answer.
    if (count && !count.settled) {
      app.ctx.limiter.hit(count.key, count.limit).catch((err: unknown) => req.log.error({ err }, 'counting a refused request failed'));
    }
    done();
  });
}

/**
 * Sets the RateLimit-* headers; returns the 429 to answer when the request is over the limit. Every 429 passes
 * here exactly once (counted up front, or settled by its write before the route answers `overLimit`), so this is
 * where it is counted.
 */
function answer(reply: FastifyReply, d: RateDecision): ApiError | null {
  reply.header('ratelimit-limit', String(d.limit));
  reply.header('ratelimit-remaining', String(d.remaining));
  reply.header('ratelimit-reset', String(d.resetSeconds));
  if (d.allowed) return null;
  reply.server.ctx.metrics.rateLimited(reply.request.routeOptions.url);
  return errors.rateLimited(d.resetSeconds);
}

/** The 429 of a request whose write found it over its limit (its RateLimit-* headers are already set). */
export function overLimit(o: OverLimit): ApiError {
  return errors.rateLimited(o.retryAfterSeconds);
}
