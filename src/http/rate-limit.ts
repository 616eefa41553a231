// Spec 8.1 at the HTTP edge: which bucket a request counts in, where it is counted, its RateLimit-* headers and
// its 429.
//
// A limited route declares `config.rateLimit` (one key for every context); its context's authentication hook
// calls `limitRequest` once it knows who is calling. A route whose work is one run write (starting a run, a
// callback) declares `inWrite`, and the hook hands `req.rateGuard` to the service, whose write counts the request
// in its own statement (rate-guard.ts: one round trip and one commit instead of two); over the limit the service
// returns OverLimit and the route answers `overLimit(result)`. Every other route counts up front. A request
// refused before it reaches its write (400, 403, 422 …) is counted right after its answer, so it still uses up the
// bucket and a caller over its limit is answered 429 from memory from then on.
//
// The decision is a value (req.rateDecision, or the guard's once its write has counted): the edge turns it into
// headers as the answer leaves, so storage never touches a reply.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { LIMITS, type RateDecision } from '../rate-limits/rate-limiter.ts';
import type { OverLimit, RateGuard } from '../rate-limits/rate-guard.ts';
import { errors, type ApiError } from '../errors.ts';
import { sendError } from './error-handler.ts';

/** A limited route's `config.rateLimit`: spec 8.1's bucket, its per-minute limit (LIMITS), and whom it counts. */
export interface RouteRateLimit {
  bucket: string;
  limit: number;
  /** Whose bucket: the agent's (the default), the user's across agents, or the user's for this agent. */
  per?: 'agent' | 'user' | 'user_agent';
  /** Counted inside the run write the handler hands `req.rateGuard` to. */
  inWrite?: boolean;
}

/** Spec 8.1's /trigger bucket, which the console's "run now" and an admin replay count in too. */
export const TRIGGER_RATE_LIMIT: Readonly<RouteRateLimit> = { bucket: 'trigger', limit: LIMITS.trigger, inWrite: true };

declare module 'fastify' {
  interface FastifyContextConfig {
    rateLimit?: RouteRateLimit;
  }
  interface FastifyRequest {
    /** The request's count when it rides on the request's write: hand it to the service (null otherwise). */
    rateGuard: RateGuard | null;
    /** The decision of a request counted up front (a guarded one's is `rateGuard.decision`). */
    rateDecision: RateDecision | null;
  }
}

/** Who is calling, as far as the route's authentication knows. */
export interface RateSubject {
  agentId: number;
  userId?: string | null;
}

/** Spec 8.1: the key of the bucket a request of `rl` counts in. */
export function bucketKey(rl: Pick<RouteRateLimit, 'bucket' | 'per'>, who: RateSubject): string {
  switch (rl.per ?? 'agent') {
    case 'agent':
      return `${rl.bucket}:agent:${who.agentId}`;
    case 'user':
      return `${rl.bucket}:user:${who.userId}`;
    case 'user_agent':
      return `${rl.bucket}:user:${who.userId}:agent:${who.agentId}`;
  }
}

/**
 * Counts the request (or arranges for its write to). Over the limit it answers the 429 itself and returns true:
 * the hook then returns `reply`, which ends the request. (A hook that threw instead would go through Fastify's
 * error path, a measurable share of the cost of a 429 — and a caller over its limit should cost little.)
 */
export async function limitRequest(app: FastifyInstance, req: FastifyRequest, reply: FastifyReply, rl: RouteRateLimit, who: RateSubject): Promise<boolean> {
  const limiter = app.ctx.limiter;
  const key = bucketKey(rl, who);
  let decision: RateDecision;
  if (rl.inWrite && limiter.guard) {
    const guard = limiter.guard(key, rl.limit);
    if (!('allowed' in guard)) {
      req.rateGuard = guard;
      return false;
    }
    decision = guard;
  } else {
    decision = await limiter.hit(key, rl.limit);
  }
  req.rateDecision = decision;
  if (decision.allowed) return false;
  sendError(reply, errors.rateLimited(decision.resetSeconds));
  return true;
}

/**
 * Once per app. As an answer leaves: the RateLimit-* headers of its decision, and the 429 metric (every 429 has a
 * decision, made up front or by its write, and passes here once). After it: the count of a request that never
 * reached its write.
 */
export function rateLimitEdge(app: FastifyInstance): void {
  app.decorateRequest('rateGuard', null);
  app.decorateRequest('rateDecision', null);
  app.addHook('onSend', (req, reply, payload, done) => {
    const d = req.rateDecision ?? req.rateGuard?.decision;
    if (d) {
      reply.header('ratelimit-limit', String(d.limit));
      reply.header('ratelimit-remaining', String(d.remaining));
      reply.header('ratelimit-reset', String(d.resetSeconds));
      if (!d.allowed) app.ctx.metrics.rateLimited(req.routeOptions.url);
    }
    done(null, payload);
  });
  app.addHook('onResponse', (req, _reply, done) => {
    const count = req.rateGuard;
    // hit() fails open and reports store errors itself; nothing here can fail the (already sent) answer.
    if (count && !count.settled) {
      app.ctx.limiter.hit(count.key, count.limit).catch((err: unknown) => req.log.error({ err }, 'counting a refused request failed'));
    }
    done();
  });
}

/** The 429 of a request whose write found it over its limit (its headers follow from the guard's decision). */
export function overLimit(o: OverLimit): ApiError {
  return errors.rateLimited(o.retryAfterSeconds);
}
