// The whole HTTP service as one Fastify app. Only service.ts opens a port; tests call buildApp() and inject().
// Auth follows where a route is registered: one encapsulated context per credential (house style 2).
import { randomBytes } from 'node:crypto';
import Fastify, { LogController, type FastifyInstance, type FastifyServerOptions } from 'fastify';
import addFormatsModule from 'ajv-formats';
import type { AppContext } from './context.ts';
import { installErrorHandling } from './http/error-handler.ts';
import type { AgentRow } from './agents/agents-repo.ts';
import adminRoutes from './routes/admin/index.ts';
import ingestRoutes from './routes/ingest/index.ts';
import webhookRoutes from './routes/webhooks/index.ts';
import runtimeRoutes from './routes/runtime/index.ts';
import healthRoutes from './routes/health.ts';
import consoleRoutes from './routes/console.ts';
import metricsRoutes from './routes/metrics.ts';
import zoneRoutes from './routes/zones/index.ts';
import zoneProxyRoutes from './routes/zone-proxy/index.ts';
import alertRoutes from './routes/alerts.ts';
import docsRoutes from './routes/docs.ts';
import sessionRoutes from './routes/session.ts';
import { ADMIN_COMPONENTS } from './routes/admin/views.ts';
import { registerOpenApi } from './http/openapi-document.ts';
import { rateLimitEdge } from './http/rate-limit.ts';
import { refuseUnstorableBodies } from './http/storable-body.ts';
import { clientErrorHandler, serverTimeouts } from './http/slow-clients.ts';
import { lazyChildLogger } from './http/lazy-request-logger.ts';
import { logRequests, requestIdFrom } from './http/request-log.ts';
import { traceRequests } from './http/request-trace.ts';

declare module 'fastify' {
  interface FastifyInstance {
    ctx: AppContext;
  }
  interface FastifyRequest {
    /** The agent the request's credential belongs to, set by the context's auth hook. */
    agent: AgentRow | null;
  }
}

// ajv-formats is CommonJS; its default export arrives wrapped under ESM.
const addFormats = (addFormatsModule as unknown as { default?: typeof addFormatsModule }).default ?? addFormatsModule;

export interface BuildOptions {
  /** Tests: hooks that must see every route (the OpenAPI response check), added before any route exists. */
  instrument?: (app: FastifyInstance) => void;
}

export async function buildApp(ctx: AppContext, opts: BuildOptions = {}): Promise<FastifyInstance> {
  // Request ids: unique per app (a random prefix) and across its life (a counter); cheaper than a UUID per
  // request on the hottest paths.
  const requestIdPrefix = `req_${randomBytes(6).toString('hex')}`;
  let requestCounter = 0;
  const nextRequestId = () => `${requestIdPrefix}${(++requestCounter).toString(36)}`;
  const options: FastifyServerOptions & { http: object } = {
    loggerInstance: ctx.log,
    // One line per request (http/request-log.ts), not Fastify's two.
    logController: new LogController({ disableRequestLogging: true }),
    childLoggerFactory: lazyChildLogger,
    genReqId: requestIdFrom(nextRequestId),
    bodyLimit: ctx.config.maxJsonBodyBytes, // spec 8.4: input/output JSON has no hard cap; one operator ceiling
    ...serverTimeouts(ctx.config), // slow clients: request, headers, keep-alive and connection idle timeouts
    clientErrorHandler: clientErrorHandler(nextRequestId),
    routerOptions: { maxParamLength: 512 },
    ajv: {
      customOptions: { coerceTypes: false, removeAdditional: false, useDefaults: true, allErrors: false },
      plugins: [addFormats as never],
    },
  };
  // Route modules opt into TypeBox typing with app.withTypeProvider<TypeBoxTypeProvider>().
  const app = Fastify(options);

  app.decorate('ctx', ctx);
  app.decorateRequest('agent', null);
  // Hooks on every request are callback-style: an async hook costs a promise and a microtask hop each.
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  traceRequests(app); // the caller's trace context, and a span per request while spans are recorded
  logRequests(app, ctx.config.requestLog); // and the request metrics, once the answer has gone
  installErrorHandling(app);
  refuseUnstorableBodies(app);
  rateLimitEdge(app);
  opts.instrument?.(app);
  // Before any route: the generator collects every route as it is registered.
  await registerOpenApi(app, ADMIN_COMPONENTS);

  await app.register(healthRoutes);
  await app.register(metricsRoutes);
  await app.register(sessionRoutes); // /api/session: the console's sign-in
  await app.register(adminRoutes, { prefix: '/api/admin' });
  await app.register(ingestRoutes, { prefix: '/api/agents/:agentId/runs' });
  await app.register(webhookRoutes, { prefix: '/api/agents/:agentId/runs' }); // token in the path (spec 4.6, 4.7)
  await app.register(runtimeRoutes, { prefix: '/api' });
  await app.register(zoneRoutes, { prefix: '/api/zones/agents/:agentId' });
  await app.register(zoneProxyRoutes, { prefix: '/zones/:agentId/app', framed: false });
  await app.register(zoneProxyRoutes, { prefix: '/zones/:agentId/framed/:pass', framed: true });
  await app.register(alertRoutes, { prefix: '/api' }); // runtime failure alerts, runtime alert secret
  await app.register(docsRoutes); // /openapi.json and /docs, public
  await app.register(consoleRoutes); // the web console's pages and assets, public (the API checks who signs in)

  // Shutdown must not wait up to 5 minutes for held callers: every synchronous wait of this instance (ingest,
  // webhook and zone alike) answers 202 now, before the server stops (decisions.md).
  app.addHook('preClose', async () => {
    await ctx.waits.handBackAll();
  });
  return app;
}
