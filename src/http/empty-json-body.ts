// Spec 4.9: "an empty body is valid". Fastify refuses a zero-length body declared as application/json
// (FST_ERR_CTP_EMPTY_JSON_BODY), and runtimes' HTTP nodes send exactly that for "no body". Register these inside
// the route's own plugin: the parser swap is encapsulated there and leaves every other route's JSON parsing as is.
import type { FastifyInstance, FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';

/** Empty or whitespace-only JSON bodies parse as "no body"; anything else goes to Fastify's stock parser. */
export function allowEmptyJsonBody(app: FastifyInstance): void {
  const stock = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = typeof body === 'string' ? body : body.toString('utf8');
    if (text.trim() === '') return done(null, undefined);
    return stock(req, text, done);
  });
}

/**
 * preValidation: a missing body validates as `{}`. Callback-style, as every hook on a hot path: an async hook costs
 * a promise and a microtask hop on each request (decisions.md "Hooks on the hot paths are callback-style").
 */
export function emptyBodyAsObject(req: FastifyRequest, _reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (req.body === undefined || req.body === null || req.body === '') req.body = {};
  done();
}
