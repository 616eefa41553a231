// Dependencies are built once and passed in (house style 8). Services are plain functions taking this context,
// so routes and background jobs call the same code (house style 11).
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './storage/db.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { SecretBox } from './lib/secrets.ts';
import { AgentDirectory } from './agents/agent-directory.ts';
import { DbRateLimiter, type RateLimiter } from './rate-limits/rate-limiter.ts';
import { RunWatch } from './runs/run-watch.ts';
import { createOutboundClient, type OutboundClient } from './lib/safe-http.ts';
import { createRuntimeRegistry, type RuntimeRegistry } from './runtimes/runtime-registry.ts';

export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  agents: AgentDirectory;
  limiter: RateLimiter;
  runWatch: RunWatch;
  runtimes: RuntimeRegistry;
  /** The SSRF-guarded client for every tenant- or runtime-supplied URL (webhook actions, OAuth token endpoints). */
  outbound: OutboundClient;
  /** The platform-admin bearer for /api/admin (admin-api.md). */
  adminToken: string;
  log: FastifyBaseLogger;
}

export interface ContextOptions {
  config: Config;
  db: Db;
  masterKey: Buffer;
  adminToken: string;
  clock?: Clock;
  limiter?: RateLimiter;
  runtimes?: RuntimeRegistry;
  onLimiterError?: (err: unknown) => void;
}

export type ServiceContext = Omit<AppContext, 'log'>;

export async function createContext(opts: ContextOptions): Promise<ServiceContext> {
  const clock = opts.clock ?? systemClock;
  const secrets = new SecretBox(opts.masterKey);
  const agents = new AgentDirectory(opts.db, secrets);
  const runWatch = new RunWatch(opts.db);
  await agents.start();
  await runWatch.start();
  return {
    config: opts.config,
    db: opts.db,
    clock,
    secrets,
    agents,
    limiter: opts.limiter ?? new DbRateLimiter(opts.db, clock, opts.onLimiterError ?? (() => {}), { countsRideOnWrites: true }),
    runWatch,
    runtimes: opts.runtimes ?? createRuntimeRegistry(),
    outbound: createOutboundClient({ allowHosts: opts.config.outboundAllowHosts }),
    adminToken: opts.adminToken,
  };
}

export async function stopContext(ctx: ServiceContext): Promise<void> {
  await ctx.agents.stop();
  await ctx.runWatch.stop();
  await ctx.outbound.close();
}
