import type { FastifyReply } from 'fastify';
import type { RateLimiter } from '../limits/rate-limiter.ts';
import { errors } from '../errors.ts';

/** Counts one request against `key`; throws 429 with Retry-After (spec 8.1, part 7 rule 1) when over `limit`. */
export async function enforceRateLimit(limiter: RateLimiter, reply: FastifyReply, key: string, limit: number): Promise<void> {
  const d = await limiter.hit(key, limit);
  reply.header('ratelimit-limit', String(d.limit));
  reply.header('ratelimit-remaining', String(d.remaining));
  reply.header('ratelimit-reset', String(d.resetSeconds));
  if (!d.allowed) throw errors.rateLimited(d.resetSeconds);
}
