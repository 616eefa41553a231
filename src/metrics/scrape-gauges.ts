// Gauges read when /metrics is scraped rather than kept up to date on every change: what this instance holds
// (synchronous callers, workflow calls), the database pool, and what the database says (the runs in flight by
// status, the outbox backlog and its oldest delivery's age). A scrape must answer even when the database does not:
// a count that fails or is slow reports NaN (unknown), never a reassuring 0.
import { Gauge, type Registry } from 'prom-client';
import { within } from '../lib/within.ts';

export interface PoolStats {
  /** Connections open (idle or in use). */
  total: number;
  idle: number;
  /** Queries queued for a free connection. */
  waiting: number;
}

export interface ScrapeSources {
  heldWaits(): number;
  heldCalls(): number;
  /** Outbox rows still to deliver (neither delivered nor given up), and the oldest one's age. */
  outboxBacklog(): Promise<{ count: number; oldestAgeSeconds: number }>;
  /** Runs in flight, by status. */
  activeRuns(): Promise<Record<'queued' | 'running' | 'waiting', number>>;
  /** The database pool; absent when there is none (embedded PGlite: one in-process connection, no gauges). */
  poolStats?: () => PoolStats;
  /** A database count that failed or timed out. */
  onCollectError(err: unknown): void;
}

/** A scrape waits this long for each database count (Prometheus' own scrape timeout defaults to 10 s). */
const COUNT_TIMEOUT_MS = 2_000;

export function addScrapeGauges(registry: Registry, sources: ScrapeSources): void {
  const registers = [registry];
  // First: a gauge's collect runs as the scrape reaches it, and the database counts below queue a query on the
  // pool, which a pool gauge read after them counted as a waiting query (issue 39: 1 on an idle instance).
  addPoolGauges(registers, sources.poolStats);
  new Gauge({
    name: 'ars_held_sync_waits',
    help: 'Synchronous callers this instance holds waiting for a run (trigger-and-wait, webhook-and-wait, zone waits; not downloads).',
    registers,
    collect() {
      this.set(sources.heldWaits());
    },
  });
  new Gauge({
    name: 'ars_held_workflow_calls',
    help: 'Workflow (n8n) calls this instance holds open until their answer.',
    registers,
    collect() {
      this.set(sources.heldCalls());
    },
  });
  // One read per scrape serves every gauge that needs it, started by whichever the scrape reaches first.
  const readBacklog = sharedRead(() => sources.outboxBacklog(), sources.onCollectError);
  const readActive = sharedRead(() => sources.activeRuns(), sources.onCollectError);
  new Gauge({
    name: 'ars_outbox_backlog',
    help: 'Webhook-action deliveries neither delivered nor given up, across all instances (NaN when the count failed).',
    registers,
    async collect() {
      this.set((await readBacklog())?.count ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'ars_outbox_oldest_pending_age_seconds',
    help: 'How long the oldest undelivered webhook-action delivery has waited; 0 when none (NaN when the read failed).',
    registers,
    async collect() {
      this.set((await readBacklog())?.oldestAgeSeconds ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'ars_runs_active',
    help: 'Runs in flight across all instances, by status: queued, running, waiting (NaN when the count failed).',
    labelNames: ['status'],
    registers,
    async collect() {
      const counts = await readActive();
      for (const status of ['queued', 'running', 'waiting'] as const) this.set({ status }, counts?.[status] ?? Number.NaN);
    },
  });
  new Gauge({
    name: 'ars_database_up',
    help: '1 when this scrape could read the database within 2 s (the runs in flight), else 0.',
    registers,
    async collect() {
      this.set((await readActive()) ? 1 : 0);
    },
  });
}

/** `read` once per scrape however many gauges await it; a failure or a timeout is null (and reported). */
function sharedRead<T>(read: () => Promise<T>, onError: (err: unknown) => void): () => Promise<T | null> {
  let current: Promise<T | null> | null = null;
  return () => {
    if (current) return current;
    const reading = within(read(), COUNT_TIMEOUT_MS).catch((err: unknown) => {
      onError(err);
      return null;
    });
    current = reading;
    // A scrape calls every gauge's collect in one synchronous pass (prom-client's Registry.metrics), so they all
    // hold this read by the time it settles; the next scrape reads again.
    void reading.finally(() => (current = null));
    return reading;
  };
}

function addPoolGauges(registers: Registry[], poolStats: (() => PoolStats) | undefined): void {
  if (!poolStats) return;
  const pool = (name: string, help: string, pick: (s: PoolStats) => number): void => {
    new Gauge({
      name,
      help,
      registers,
      collect() {
        this.set(pick(poolStats()));
      },
    });
  };
  pool('ars_db_pool_connections', 'Database connections open in this instance\'s pool', (s) => s.total);
  pool('ars_db_pool_idle_connections', 'Idle connections in this instance\'s database pool', (s) => s.idle);
  pool('ars_db_pool_waiting_queries', 'Queries waiting for a free connection of this instance\'s pool', (s) => s.waiting);
}

