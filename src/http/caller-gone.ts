import type { FastifyReply } from 'fastify';

/**
 * Fires when the caller disconnects before its response was sent. Synchronous endpoints pass it to the wait:
 * a caller that hangs up stops the wait, never the run (spec 4.2: the run continues asynchronously).
 */
export function callerGoneSignal(reply: FastifyReply): AbortSignal {
  const controller = new AbortController();
  reply.raw.once('close', () => {
    if (!reply.raw.writableFinished) controller.abort();
  });
  return controller.signal;
}
