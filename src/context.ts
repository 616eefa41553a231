// Dependencies are built once and passed in (house style 8). Services are plain functions taking this context,
// so routes and background jobs call the same code (house style 11).
import type { FastifyBaseLogger } from 'fastify';
import type { Config } from './config.ts';
import type { Db } from './storage/db.ts';
import type { Clock } from './lib/clock.ts';
import type { SecretBox } from './lib/secrets.ts';
import type { AgentDirectory } from './services/agents/agent-directory.ts';
import type { RateLimiter } from './limits/rate-limiter.ts';
import type { RunWatch } from './services/runs/run-watch.ts';
import type { RuntimeRegistry } from './runtimes/runtime-registry.ts';

export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  agents: AgentDirectory;
  limiter: RateLimiter;
  runWatch: RunWatch;
  runtimes: RuntimeRegistry;
  /** The platform-admin bearer for /api/admin (admin-api.md). */
  adminToken: string;
  log: FastifyBaseLogger;
}
