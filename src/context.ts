// Dependencies are built once and passed in (house style 8). Services are plain functions taking this context,
// so routes and background jobs call the same code (house style 11). Everything an instance holds is a member,
// created in createContext and stopped in stopContext (house style 15): two instances in one process (tests)
// share nothing.
import type { FastifyBaseLogger } from 'fastify';
import pino from 'pino';
import type { Config } from './config.ts';
import type { Db } from './storage/db.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { SecretBox, type Keyring } from './lib/secrets.ts';
import { SingleFlight } from './lib/single-flight.ts';
import { AgentDirectory } from './agents/agent-directory.ts';
import { DbRateLimiter, type RateLimiter } from './rate-limits/rate-limiter.ts';
import { HeldCalls } from './runs/held-workflow-calls.ts';
import { RunLeases } from './runs/run-leases.ts';
import { loadDeploymentId } from './storage/service-identity.ts';
import { RunWatch } from './runs/run-watch.ts';
import { createOutboundClient, type OutboundClient } from './lib/safe-http.ts';
import { createRuntimeRegistry, type RuntimeRegistry } from './runtimes/runtime-registry.ts';
import { PollBudget } from './sync/task-wait.ts';
import { WaitRegistry } from './sync/wait-registry.ts';
import type { OAuthRefreshes } from './credentials/oauth-refresh.ts';
import { logRedactPaths, logSerializers } from './http/log-redaction.ts';
import { ServiceMetrics } from './metrics/metrics.ts';
import { LiveRunStreams } from './admin/live-streams.ts';
import { pendingDeliveries } from './events/outbox-repo.ts';
import { countActiveRuns } from './runs/runs-repo.ts';
import { installTraceContext, traceFields, tracesExported } from './tracing/spans.ts';
import { tracedDb } from './storage/traced-db.ts';

export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  agents: AgentDirectory;
  limiter: RateLimiter;
  runWatch: RunWatch;
  runtimes: RuntimeRegistry;
  /**
   * The SSRF-guarded client for every tenant- or runtime-supplied URL (webhook actions, OAuth token endpoints,
   * Trigger.dev's presigned outputs: the runtime registry gets this one).
   */
  outbound: OutboundClient;
  /** The platform-admin bearer for /api/admin (admin-api.md). */
  adminToken: string;
  /** The root logger; Fastify's request loggers are its children. */
  log: FastifyBaseLogger;
  /** Sent in every task payload: names this deployment's runs at a runtime other deployments may share. */
  deploymentId: string;
  /** Runs whose runtime calls this instance holds, with their leases kept alive (recovery takes the rest). */
  leases: RunLeases;
  /** Workflow calls this instance holds open. */
  heldCalls: HeldCalls;
  /** Synchronous callers this instance holds, and their backstop timer. */
  waits: WaitRegistry;
  /** Spaces out the runtime status reads of this instance's task waits. */
  pollBudget: PollBudget;
  /** One OAuth refresh in flight per connection on this instance. */
  oauthRefreshes: OAuthRefreshes;
  /** This instance's Prometheus registry and the metrics in it (GET /metrics). */
  metrics: ServiceMetrics;
  /** The console's live run streams on this instance and the feed they share. */
  liveStreams: LiveRunStreams;
}

export interface ContextOptions {
  config: Config;
  db: Db;
  /** The master keys by id; `current` seals (decisions.md "Storage and secrets"). */
  masterKeys: Keyring;
  adminToken: string;
  clock?: Clock;
  limiter?: RateLimiter;
  runtimes?: RuntimeRegistry;
  onLimiterError?: (err: unknown) => void;
  /** Where log lines go (stdout by default); tests capture them to scan for secrets. */
  logStream?: pino.DestinationStream;
}

export async function createContext(options: ContextOptions): Promise<AppContext> {
  installTraceContext();
  // Each statement a span of its own only when spans are recorded (otherwise no wrapper at all).
  const opts = tracesExported() ? { ...options, db: tracedDb(options.db) } : options;
  const log = createLogger(opts.config, opts.logStream);
  const clock = opts.clock ?? systemClock;
  const secrets = new SecretBox(opts.masterKeys);
  const agents = new AgentDirectory(opts.db, secrets);
  const runWatch = new RunWatch(opts.db);
  const deploymentId = await loadDeploymentId(opts.db);
  const heldCalls = new HeldCalls(runWatch);
  const waits = new WaitRegistry(opts.db, runWatch, log);
  const metrics = new ServiceMetrics({
    heldWaits: () => waits.size,
    heldCalls: () => heldCalls.size,
    outboxBacklog: () => pendingDeliveries(opts.db, clock.now()),
    activeRuns: () => countActiveRuns(opts.db),
    poolStats: opts.db.poolStats?.bind(opts.db),
    onCollectError: (err) => log.warn({ err }, 'metrics: a database count (runs in flight, outbox backlog) failed'),
  });
  // Spec 8.1: the limiter fails open, and says so (decisions.md "Rate limits"), in the log and in the metrics.
  const reportLimiterError = opts.onLimiterError ?? ((err: unknown) => log.error({ err }, 'rate-limit store failed; request let through'));
  const onLimiterError = (err: unknown): void => {
    metrics.limiterFailedOpen();
    reportLimiterError(err);
  };
  await agents.start();
  await runWatch.start();
  // One guarded client for every tenant- or runtime-supplied URL, the runtimes' presigned outputs included.
  const outbound = createOutboundClient({ allowHosts: opts.config.outboundAllowHosts });
  return {
    config: opts.config,
    db: opts.db,
    clock,
    secrets,
    agents,
    limiter: opts.limiter ?? new DbRateLimiter(opts.db, clock, onLimiterError, { countsRideOnWrites: true }),
    runWatch,
    runtimes: opts.runtimes ?? createRuntimeRegistry({ http: { metrics }, outbound }),
    outbound,
    adminToken: opts.adminToken,
    log,
    deploymentId,
    leases: new RunLeases(opts.db, clock, opts.config.runLeaseMs, log),
    heldCalls,
    waits,
    pollBudget: new PollBudget(),
    oauthRefreshes: new SingleFlight(),
    metrics,
    liveStreams: new LiveRunStreams(opts.db, log, opts.config.liveStreams),
  };
}

/** Held callers answer, held runtime calls are handed back, then the caches and the run watch stop. */
export async function stopContext(ctx: AppContext): Promise<void> {
  await ctx.waits.stop();
  await ctx.heldCalls.abortAll();
  ctx.leases.stop();
  await ctx.liveStreams.close();
  await ctx.agents.stop();
  await ctx.runWatch.stop();
  await ctx.outbound.close();
}

// buildApp hands this logger to Fastify, whose app.log is a child of it (adding Fastify's `res` serializer).
function createLogger(config: Config, stream: pino.DestinationStream | undefined): FastifyBaseLogger {
  const options: pino.LoggerOptions = { level: config.logLevel, serializers: logSerializers, redact: [...logRedactPaths], mixin: traceFields };
  return stream ? pino(options, stream) : pino(options);
}
