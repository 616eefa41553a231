// Configuration is parsed once, here, and fails fast naming every bad variable (house style 7).
// Nothing else in src/ reads process.env.
import path from 'node:path';
import { DEFAULT_KEY_ID, KEY_ID_PATTERN, type Keyring, type MasterKey } from './lib/secrets.ts';
import { lifecycleOf, type LifecycleSettings } from './lib/lifecycle-settings.ts';

export interface Config {
  port: number;
  host: string;
  databaseUrl: string | null;
  dataDir: string;
  adminToken: string | null; // null: the embedded default generates one (see bootstrap)
  /** The master keys by id and the one that seals; null: the embedded default generates one (bootstrap). */
  masterKeys: Keyring | null;
  publicUrl: string;
  queuedTimeoutMs: number;
  sweepIntervalMs: number;
  /** How long a runtime call held by an instance counts as alive without renewal (decisions.md "Recovering lost runs"). */
  runLeaseMs: number;
  /** SIGTERM: how long held runtime calls may still answer before they are left to recovery. */
  shutdownGraceMs: number;
  outboundAllowHosts: string[];
  /** A zone app's answer is passed on up to this many bytes (issue 35): announced larger → 502, streamed past → cut. */
  zoneMaxResponseBytes: number;
  maxJsonBodyBytes: number;
  /** Bearer token /metrics requires; null: /metrics is open (decisions.md "Metrics"). */
  metricsToken: string | null;
  /** Finished outbox rows and alert receipts are deleted this many days after they finished or arrived. */
  retentionDays: number;
  lifecycle: LifecycleSettings; // opt-in, decisions.md "Data lifecycle"; null: kept indefinitely (spec 2.2)
  /** How long the first answer to an Idempotency-Key is kept and replayed (decisions.md "Idempotency keys"). */
  idempotencyTtlHours: number;
  /** How long a console session lasts after sign-in (decisions.md "Sessions and roles"). */
  sessionTtlHours: number;
  logLevel: string;
  /** Which answers get a request line (http/request-log.ts): all, errors (4xx, 5xx) or server_errors. */
  requestLog: RequestLogSetting;
  /** PostgreSQL pool: connections, and how long a request waits for one (a free slot or a new connection). */
  dbPoolSize: number;
  /** At start, how long an unreachable database is retried (with backoff) before the start gives up; 0: once. */
  dbStartupTimeoutMs: number;
  dbConnectTimeoutMs: number;
  /** Server-side ceiling on one statement, and on a transaction sitting idle; 0 = none. */
  dbStatementTimeoutMs: number;
  /** Slow clients (decisions.md "Slow clients"): the whole request, headers and body, must arrive within this. */
  requestTimeoutMs: number;
  /** The request headers must arrive within this (at most requestTimeoutMs). */
  headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  keepAliveTimeoutMs: number;
  /** A connection with no byte moving either way for this long is closed; 0 = never. Longer than any held answer. */
  connectionIdleTimeoutMs: number;
  /** A download whose client has taken nothing for this long is ended, its run failed and the runtime call closed. */
  downloadStallMs: number;
  /** The built web console (issue 14) served at /; missing: its pages answer 503 saying how to build it. */
  consoleDir: string;
  /** The console's live run streams (GET /api/admin/runs/events). */
  liveStreams: LiveStreamSettings;
  /** OpenTelemetry traces over OTLP (tracing/otlp-export.ts); null: none recorded (the standard OTEL_* variables). */
  tracing: TracingSettings | null;
}

export interface TracingSettings {
  /** Where spans are POSTed (OTLP over HTTP, protobuf): OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, else OTEL_EXPORTER_OTLP_ENDPOINT + /v1/traces. */
  endpoint: string;
  serviceName: string;
  /** OTEL_TRACES_SAMPLER: which traces are recorded; `ratio` for the traceidratio samplers (OTEL_TRACES_SAMPLER_ARG). */
  sampler: TraceSampler;
  ratio: number;
  /** OTEL_BSP_SCHEDULE_DELAY: spans are sent in batches at most this long after they end. */
  scheduleDelayMs: number;
}

/** The standard sampler names we support (the OpenTelemetry SDK configuration's list, without the Jaeger one). */
export const TRACE_SAMPLERS = ['parentbased_always_on', 'parentbased_always_off', 'parentbased_traceidratio', 'always_on', 'always_off', 'traceidratio'] as const;
export type TraceSampler = (typeof TRACE_SAMPLERS)[number];

export interface LiveStreamSettings {
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  heartbeatMs: number;
  /** Streams one instance holds at most; more are 503 (each holds a socket and a subscription). */
  maxStreams: number;
  /** Streams one user (or the admin token) holds at most on one instance; more are 429. A console tab holds one. */
  maxStreamsPerUser: number;
  /** How often an open stream checks that its credential and memberships still allow it (issue 35). */
  recheckMs: number;
  /** The run feed's catch-up period (admin/run-feed.ts): how late a change whose NOTIFY was missed can be. */
  pollMs: number;
}

/** Every problem found, each printed as one line naming its setting (server.ts exits 2). */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(problems.map((p) => `invalid configuration: ${p}`).join('\n'));
  }
}

/** ARS_REQUEST_LOG: which answers get a request line (http/request-log.ts). */
export const REQUEST_LOG_SETTINGS = ['all', 'errors', 'server_errors'] as const;
export type RequestLogSetting = (typeof REQUEST_LOG_SETTINGS)[number];

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'];
/** Spec 8.3's platform ceiling on a synchronous wait (sync/wait-window.ts; config sits below that layer). */
const SYNC_WAIT_CEILING_MS = 300_000;

export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const problems: string[] = [];
  const int = (name: string, fallback: number, min: number, max: number): number => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    const n = Number(raw);
    if (!/^\d+$/.test(raw) || n < min || n > max) {
      problems.push(`${name} must be a whole number from ${min} to ${max} (got "${raw}")`);
      return fallback;
    }
    return n;
  };

  const port = int('PORT', 8080, 0, 65535);
  const databaseUrl = env.DATABASE_URL || null;
  if (databaseUrl && !/^postgres(ql)?:\/\//.test(databaseUrl)) problems.push('DATABASE_URL must be a postgres:// URL');

  const adminToken = env.ARS_ADMIN_TOKEN || null;
  if (adminToken !== null && adminToken.length < 32) problems.push('ARS_ADMIN_TOKEN must be at least 32 characters');

  const masterKeys = masterKeysOf(env, problems);
  if (!env.ARS_MASTER_KEY && !env.ARS_MASTER_KEYS && databaseUrl) problems.push('ARS_MASTER_KEY or ARS_MASTER_KEYS is required with DATABASE_URL (only the embedded default generates one)');

  const metricsToken = env.ARS_METRICS_TOKEN || null;
  if (metricsToken !== null && (metricsToken.length < 32 || /\s/.test(metricsToken))) {
    problems.push('ARS_METRICS_TOKEN must be at least 32 characters, without spaces');
  }

  const publicUrl = (env.ARS_PUBLIC_URL || `http://localhost:${port}`).replace(/\/+$/, '');
  try {
    const u = new URL(publicUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('scheme');
  } catch {
    problems.push('ARS_PUBLIC_URL must be an absolute http(s) URL');
  }

  // 0 turns the ceiling off; anything between would cut off ordinary statements.
  const dbStatementTimeoutMs = int('ARS_DB_STATEMENT_TIMEOUT_MS', 15_000, 0, 86_400_000);
  if (dbStatementTimeoutMs > 0 && dbStatementTimeoutMs < 100) problems.push('ARS_DB_STATEMENT_TIMEOUT_MS must be 0 (no limit) or at least 100');

  // Slow clients. A held synchronous answer (spec 8.3: up to 5 minutes) sends nothing while it waits, so a
  // connection idle timeout must outlast it; only the download stall bounds a client that stops reading.
  const requestTimeoutMs = int('ARS_REQUEST_TIMEOUT_MS', 30_000, 1_000, 3_600_000);
  const headersTimeoutMs = int('ARS_HEADERS_TIMEOUT_MS', 10_000, 1_000, 3_600_000);
  if (headersTimeoutMs > requestTimeoutMs) problems.push('ARS_HEADERS_TIMEOUT_MS must not be longer than ARS_REQUEST_TIMEOUT_MS');
  const connectionIdleTimeoutMs = int('ARS_CONNECTION_IDLE_TIMEOUT_MS', 330_000, 0, 86_400_000);
  if (connectionIdleTimeoutMs > 0 && connectionIdleTimeoutMs <= SYNC_WAIT_CEILING_MS) {
    problems.push(`ARS_CONNECTION_IDLE_TIMEOUT_MS must be 0 (none) or longer than ${SYNC_WAIT_CEILING_MS} (a held synchronous answer waits that long in silence)`);
  }

  const oneOf = <T extends string>(name: string, allowed: readonly T[], fallback: T): T => {
    const raw = env[name];
    if (raw === undefined || raw === '') return fallback;
    if ((allowed as readonly string[]).includes(raw)) return raw as T;
    problems.push(`${name} must be one of ${allowed.join(', ')} (got "${raw}")`);
    return fallback;
  };
  const logLevel = env.LOG_LEVEL || 'info';
  const idempotencyTtlHours = int('ARS_IDEMPOTENCY_TTL_HOURS', 24, 1, 720);
  if (!LOG_LEVELS.includes(logLevel)) problems.push(`LOG_LEVEL must be one of ${LOG_LEVELS.join(', ')}`);

  const config: Config = {
    port,
    host: env.HOST || '0.0.0.0',
    databaseUrl,
    dataDir: path.resolve(env.ARS_DATA_DIR || './.ars-data'),
    adminToken,
    masterKeys,
    publicUrl,
    queuedTimeoutMs: int('ARS_QUEUED_TIMEOUT_MS', 600_000, 1, 86_400_000),
    sweepIntervalMs: int('ARS_SWEEP_INTERVAL_MS', 5_000, 10, 3_600_000),
    runLeaseMs: int('ARS_RUN_LEASE_MS', 30_000, 1_000, 3_600_000),
    shutdownGraceMs: int('ARS_SHUTDOWN_GRACE_MS', 30_000, 0, 3_600_000),
    outboundAllowHosts: (env.ARS_OUTBOUND_ALLOW_HOSTS || '').split(',').map((s) => s.trim()).filter(Boolean),
    zoneMaxResponseBytes: int('ARS_ZONE_MAX_RESPONSE_BYTES', 64 * 1024 * 1024, 1024, 2 ** 40),
    maxJsonBodyBytes: int('ARS_MAX_JSON_BODY_BYTES', 64 * 1024 * 1024, 1024, 2 ** 31 - 1),
    metricsToken,
    retentionDays: int('ARS_RETENTION_DAYS', 7, 1, 3650),
    lifecycle: lifecycleOf(env, int, idempotencyTtlHours, problems),
    idempotencyTtlHours,
    sessionTtlHours: int('ARS_SESSION_TTL_HOURS', 12, 1, 720),
    logLevel,
    requestLog: oneOf('ARS_REQUEST_LOG', REQUEST_LOG_SETTINGS, 'all'),
    dbPoolSize: int('ARS_DB_POOL_SIZE', 20, 1, 1_000),
    dbStartupTimeoutMs: int('ARS_DB_STARTUP_TIMEOUT_MS', 60_000, 0, 3_600_000),
    dbConnectTimeoutMs: int('ARS_DB_CONNECT_TIMEOUT_MS', 5_000, 100, 600_000),
    dbStatementTimeoutMs,
    requestTimeoutMs,
    headersTimeoutMs,
    keepAliveTimeoutMs: int('ARS_KEEP_ALIVE_TIMEOUT_MS', 72_000, 1_000, 3_600_000),
    connectionIdleTimeoutMs,
    downloadStallMs: int('ARS_DOWNLOAD_STALL_MS', 60_000, 1_000, 3_600_000),
    // The default is the repository's own build output, wherever the service is started from.
    consoleDir: path.resolve(env.ARS_CONSOLE_DIR || path.join(import.meta.dirname, '..', 'console', 'dist')),
    liveStreams: {
      heartbeatMs: int('ARS_LIVE_STREAM_HEARTBEAT_MS', 15_000, 1_000, 300_000),
      maxStreams: int('ARS_LIVE_STREAMS_MAX', 500, 1, 100_000),
      maxStreamsPerUser: int('ARS_LIVE_STREAMS_PER_USER', 10, 1, 1_000),
      recheckMs: 5_000,
      pollMs: 2_000,
    },
    tracing: tracingFrom(env, problems, oneOf, int),
  };
  if (problems.length > 0) throw new ConfigError(problems);
  return config;
}

/**
 * The OpenTelemetry SDK's standard variables (their names and meanings, not ours): traces are exported only when an
 * OTLP endpoint is set and neither OTEL_SDK_DISABLED nor OTEL_TRACES_EXPORTER=none says otherwise. Only OTLP over
 * HTTP with protobuf (the standard's default protocol) is offered; another protocol is refused rather than ignored.
 * The exporter reads OTEL_EXPORTER_OTLP_HEADERS, _TIMEOUT and _COMPRESSION itself.
 */
function tracingFrom(
  env: Record<string, string | undefined>,
  problems: string[],
  oneOf: <T extends string>(name: string, allowed: readonly T[], fallback: T) => T,
  int: (name: string, fallback: number, min: number, max: number) => number,
): TracingSettings | null {
  const tracesEndpoint = env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || null;
  const base = env.OTEL_EXPORTER_OTLP_ENDPOINT || null;
  if (env.OTEL_SDK_DISABLED?.toLowerCase() === 'true') return null;
  const exporter = env.OTEL_TRACES_EXPORTER || 'otlp';
  if (exporter === 'none') return null;
  if (exporter !== 'otlp') problems.push(`OTEL_TRACES_EXPORTER must be otlp or none (got "${exporter}")`);
  for (const name of ['OTEL_EXPORTER_OTLP_TRACES_PROTOCOL', 'OTEL_EXPORTER_OTLP_PROTOCOL']) {
    const protocol = env[name];
    if (protocol && protocol !== 'http/protobuf') problems.push(`${name} must be http/protobuf, the only OTLP protocol offered (got "${protocol}")`);
  }
  const sampler = oneOf('OTEL_TRACES_SAMPLER', TRACE_SAMPLERS, 'parentbased_always_on');
  const endpoint = tracesEndpoint ?? (base ? `${base.replace(/\/+$/, '')}/v1/traces` : null);
  if (endpoint === null) return null;
  if (!/^https?:\/\/[^/]/.test(endpoint) || !URL.canParse(endpoint)) {
    problems.push(`${tracesEndpoint ? 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT' : 'OTEL_EXPORTER_OTLP_ENDPOINT'} must be an http(s) URL (got "${tracesEndpoint ?? base}")`);
  }
  const rawRatio = env.OTEL_TRACES_SAMPLER_ARG;
  const ratio = rawRatio === undefined || rawRatio === '' ? 1 : Number(rawRatio);
  if (!(ratio >= 0 && ratio <= 1)) problems.push(`OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (got "${rawRatio}")`);
  return {
    endpoint,
    serviceName: env.OTEL_SERVICE_NAME || 'agent-run-service',
    sampler,
    ratio: ratio >= 0 && ratio <= 1 ? ratio : 1,
    scheduleDelayMs: int('OTEL_BSP_SCHEDULE_DELAY', 5_000, 0, 3_600_000),
  };
}

/**
 * What the service itself needs beyond loadConfig() (which the maintenance commands share): with PostgreSQL,
 * nothing is generated, so the admin token must be set. Throws a ConfigError.
 */
export function checkServiceConfig(config: Config): void {
  if (config.databaseUrl && !config.adminToken) {
    throw new ConfigError(['ARS_ADMIN_TOKEN is required with DATABASE_URL (only the embedded default generates one)']);
  }
}

const BASE64_KEY = /^[A-Za-z0-9+/_-]{43}=?$/;

/**
 * ARS_MASTER_KEYS="id:base64key,…" (the first, or ARS_MASTER_KEY_ID, seals; the others only open), or the single
 * ARS_MASTER_KEY under the id "default". Problems name the entry, never its key.
 */
function masterKeysOf(env: Record<string, string | undefined>, problems: string[]): Keyring | null {
  const keyOf = (raw: string, name: string): Buffer | null => {
    const key = BASE64_KEY.test(raw.trim()) ? Buffer.from(raw.trim(), 'base64') : null;
    if (key?.length === 32) return key;
    problems.push(`${name} must be 32 bytes, base64-encoded`);
    return null;
  };
  if (env.ARS_MASTER_KEY && env.ARS_MASTER_KEYS) problems.push('set ARS_MASTER_KEY or ARS_MASTER_KEYS, not both');
  if (env.ARS_MASTER_KEY_ID && !env.ARS_MASTER_KEYS) problems.push('ARS_MASTER_KEY_ID names one of ARS_MASTER_KEYS, which is not set');
  if (env.ARS_MASTER_KEY) {
    const key = keyOf(env.ARS_MASTER_KEY, 'ARS_MASTER_KEY');
    return key ? { current: DEFAULT_KEY_ID, keys: [{ id: DEFAULT_KEY_ID, key }] } : null;
  }
  if (!env.ARS_MASTER_KEYS) return null;
  const keys: MasterKey[] = [];
  const entries = env.ARS_MASTER_KEYS.split(',').map((s) => s.trim()).filter(Boolean);
  for (const [i, entry] of entries.entries()) {
    const colon = entry.indexOf(':');
    const id = colon > 0 ? entry.slice(0, colon) : '';
    const key = KEY_ID_PATTERN.test(id) ? keyOf(entry.slice(colon + 1), `ARS_MASTER_KEYS key "${id}"`) : null;
    if (!KEY_ID_PATTERN.test(id)) problems.push(`ARS_MASTER_KEYS entry ${i + 1} must be <key id>:<base64 key>, the id 1 to 32 of A-Z a-z 0-9 _ -`);
    else if (keys.some((k) => k.id === id)) problems.push(`ARS_MASTER_KEYS names key "${id}" twice`);
    else if (key) keys.push({ id, key });
  }
  if (entries.length === 0) problems.push('ARS_MASTER_KEYS holds no key');
  const current = env.ARS_MASTER_KEY_ID || entries[0]?.split(':')[0];
  if (env.ARS_MASTER_KEY_ID && !entries.some((e) => e.split(':')[0] === current)) {
    problems.push('ARS_MASTER_KEY_ID must name one of the keys of ARS_MASTER_KEYS');
  }
  return current && keys.some((k) => k.id === current) ? { current, keys } : null;
}
