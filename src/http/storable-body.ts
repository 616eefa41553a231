// Every JSON body a route is sent — stored (runs, admin records) or forwarded (waitpoint payloads to a runtime) —
// is refused when it holds what PostgreSQL cannot store or JSON cannot carry (lib/storable-json.ts says what and
// why), before anything is written or sent: a 4xx naming the field rather than a 500 at INSERT time or in
// JSON.stringify. One app-wide hook (buildApp installs it), so a route added later cannot forget it. Bodies kept
// as raw bytes (webhooks, alerts, the zone proxy) are not JSON documents here and pass untouched: what a webhook
// sender or a runtime hands us is stored rewritten instead.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { ApiError } from '../errors.ts';
import { findUnstorable } from '../lib/storable-json.ts';

/** preValidation: 4xx naming the field (the route's validation code: 400 invalid_body, or 422). */
export function rejectUnstorableBody(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  const body = req.body;
  if (body === undefined || body === null || Buffer.isBuffer(body)) return done();
  const found = findUnstorable(body);
  if (!found) return done();
  done(new ApiError(req.routeOptions.config.validationCode ?? 'invalid_body', `${found.path} ${found.problem}`));
}

export function refuseUnstorableBodies(app: FastifyInstance): void {
  // Callback-style: an async hook on every request costs a promise and a microtask hop (decisions.md).
  app.addHook('preValidation', rejectUnstorableBody);
}
