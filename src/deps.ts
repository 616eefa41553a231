// Builds the dependencies once, for the server and for tests alike.
import type { Config } from './config.ts';
import type { Db } from './storage/db.ts';
import type { AppContext } from './context.ts';
import { systemClock, type Clock } from './lib/clock.ts';
import { SecretBox } from './lib/secrets.ts';
import { AgentDirectory } from './services/agents/agent-directory.ts';
import { DbRateLimiter, type RateLimiter } from './limits/rate-limiter.ts';
import { RunWatch } from './services/runs/run-watch.ts';
import { createRuntimeRegistry, type RuntimeRegistry } from './runtimes/runtime-registry.ts';

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
    adminToken: opts.adminToken,
  };
}

export async function stopContext(ctx: ServiceContext): Promise<void> {
  await ctx.agents.stop();
  await ctx.runWatch.stop();
}
