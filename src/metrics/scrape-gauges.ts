// Gauges read when /metrics is scraped rather than kept up to date on every change: what this instance holds
// (synchronous callers, workflow calls), the outbox backlog and the database pool. A scrape must answer even when
// the database does not: a backlog count that fails or is slow reports NaN (unknown), never a reassuring 0.
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
  /** Outbox rows still to deliver (neither delivered nor given up). */
  outboxBacklog(): Promise<number>;
  /** The database pool; absent when there is none (embedded PGlite: one in-process connection, no gauges). */
  poolStats?: () => PoolStats;
  /** A backlog count that failed or timed out. */
  onCollectError(err: unknown): void;
}

/** A scrape waits this long for the backlog count (Prometheus' own scrape timeout defaults to 10 s). */
const BACKLOG_TIMEOUT_MS = 2_000;

export function addScrapeGauges(registry: Registry, sources: ScrapeSources): void {
  const registers = [registry];
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
  new Gauge({
    name: 'ars_outbox_backlog',
    help: 'Webhook-action deliveries neither delivered nor given up, across all instances (NaN when the count failed).',
    registers,
    async collect() {
      try {
        this.set(await within(sources.outboxBacklog(), BACKLOG_TIMEOUT_MS));
      } catch (err) {
        this.set(Number.NaN);
        sources.onCollectError(err);
      }
    },
  });
  const { poolStats } = sources;
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

