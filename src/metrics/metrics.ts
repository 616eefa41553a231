// Prometheus metrics of one service instance (decisions.md "Metrics"). Each AppContext owns one Registry, never
// prom-client's global one, so two instances in one process (tests) share nothing. Every label value comes from a
// closed set (statuses, the paths below, route patterns, outcome kinds): never a run, agent or tenant id, a tenant
// name or a URL, so /metrics leaks nothing about tenants and its series stay few.
import { serviceVersion } from '../lib/service-version.ts';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { addScrapeGauges, type ScrapeSources } from './scrape-gauges.ts';
import { TERMINAL_STATUSES } from '../schemas/run-status.ts';

export type { PoolStats, ScrapeSources } from './scrape-gauges.ts';

/**
 * What wrote a run's status: `callback` (spec 4.8), `poll` (a runtime status read, the poller's or a synchronous
 * wait's), `alert` (a runtime failure alert), `sync` (a held workflow answer and the synchronous endpoints' own
 * writes), `start` (a run's insert as queued, or its failure to start), `timeout` (the timeout sweeper, a poll
 * past the running timeout, a held call's timeout backstop), `admin` (cancel, from the admin API or a zone),
 * `ingest` (runs recorded by /register and /ingest), `waitpoint` (spec 4.9), `recovery` (the run-recovery sweep:
 * a run whose runtime call was lost, found again at its runtime or failed).
 */
export type TransitionPath = 'callback' | 'poll' | 'alert' | 'sync' | 'start' | 'timeout' | 'admin' | 'ingest' | 'waitpoint' | 'recovery';

/** The outcome of one runtime API call: answered 2xx, answered otherwise, or the transport failure's kind. */
export type RuntimeCallOutcome = 'ok' | 'http_error' | 'timeout' | 'unreachable' | 'bad_response' | 'rejected' | 'not_supported';

/** What the runtime HTTP client needs of the metrics (it is built before, and apart from, the context). */
export interface RuntimeCallMetrics {
  runtimeCall(runtime: string, operation: string, outcome: RuntimeCallOutcome, seconds: number): void;
}

export type DeliveryAttemptOutcome = 'delivered' | 'retry' | 'given_up' | 'superseded' | 'error';
/** `runs_scrubbed` counts runs whose input, output and error were emptied (the rows stay); the others, rows deleted. */
export type PrunedTable = 'outbox' | 'alert_receipts' | 'idempotency_keys' | 'runs' | 'runs_scrubbed' | 'audit_log';

// Requests range from a 429 answered from memory to a synchronous wait of up to 5 minutes (spec 8.3).
const REQUEST_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];
const RUNTIME_CALL_BUCKETS = [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 15, 30];
// Due polls are claimed every sweep interval (5 s by default); minutes of lag mean the pollers cannot keep up.
const POLL_LAG_BUCKETS = [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
// A run lasts from a second to its running timeout (2 h by default, spec 2.1); its queue wait is bounded by the
// queued timeout (10 min, spec part 3).
const RUN_DURATION_BUCKETS = [1, 5, 15, 30, 60, 120, 300, 600, 1800, 3600, 7200, 14_400, 43_200, 86_400];
const QUEUE_WAIT_BUCKETS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600];
const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);


/** What a terminal run row tells the run histograms. */
interface FinishedRun {
  status: string;
  duration_ms?: number | string | null;
  created_at?: Date | string | null;
  started_at?: Date | string | null;
}

export class ServiceMetrics implements RuntimeCallMetrics {
  readonly registry = new Registry();
  readonly #transitions: Counter<'status' | 'path'>;
  readonly #requests: Histogram<'method' | 'route' | 'status_class'>;
  readonly #runtimeCalls: Histogram<'runtime' | 'operation' | 'outcome'>;
  readonly #rateLimited: Counter<'route'>;
  readonly #limiterFailOpen: Counter;
  readonly #deliveries: Counter<'outcome'>;
  readonly #pollLag: Histogram;
  readonly #pruned: Counter<'table'>;
  readonly #runDuration: Histogram<'status'>;
  readonly #queueWait: Histogram;

  constructor(sources: ScrapeSources) {
    const registers = [this.registry];
    this.#transitions = new Counter({
      name: 'ars_run_transitions_total',
      help: 'Run status writes that were applied, by the status entered and the path that wrote it.',
      labelNames: ['status', 'path'],
      registers,
    });
    this.#requests = new Histogram({
      name: 'ars_http_request_duration_seconds',
      help: 'HTTP requests until the answer was sent, by method, route pattern ("unmatched" for none) and status class.',
      labelNames: ['method', 'route', 'status_class'],
      buckets: REQUEST_BUCKETS,
      registers,
    });
    this.#runtimeCalls = new Histogram({
      name: 'ars_runtime_call_duration_seconds',
      help: 'Runtime API calls (n8n, Trigger.dev) by runtime kind, operation and outcome (ok, http_error or the failure kind).',
      labelNames: ['runtime', 'operation', 'outcome'],
      buckets: RUNTIME_CALL_BUCKETS,
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'ars_rate_limited_total',
      help: 'Requests answered 429 by the rate limiter (spec 8.1), by route pattern.',
      labelNames: ['route'],
      registers,
    });
    this.#limiterFailOpen = new Counter({
      name: 'ars_rate_limiter_fail_open_total',
      help: 'Requests let through because the rate-limit store failed (spec 8.1 fails open).',
      registers,
    });
    this.#deliveries = new Counter({
      name: 'ars_outbox_delivery_attempts_total',
      help: 'Webhook-action delivery attempts by outcome: delivered, retry (failed, tried again later), given_up, superseded (another worker took the row), error.',
      labelNames: ['outcome'],
      registers,
    });
    this.#pollLag = new Histogram({
      name: 'ars_poll_lag_seconds',
      help: 'How late each due status poll was claimed (claim time minus next_poll_at).',
      buckets: POLL_LAG_BUCKETS,
      registers,
    });
    this.#pruned = new Counter({
      name: 'ars_retention_pruned_rows_total',
      help: 'Rows deleted by retention pruning (finished outbox rows, alert receipts, expired idempotency keys; opt-in: old runs, audit entries), and runs scrubbed (table runs_scrubbed), by table.',
      labelNames: ['table'],
      registers,
    });
    this.#runDuration = new Histogram({
      name: 'ars_run_duration_seconds',
      help: 'Runs that ended, by terminal status: their duration_ms (spec 2.2; from the first start, or from creation when they never started).',
      labelNames: ['status'],
      buckets: RUN_DURATION_BUCKETS,
      registers,
    });
    this.#queueWait = new Histogram({
      name: 'ars_run_queue_wait_seconds',
      help: 'Runs that ended after starting: how long they were queued (created_at to started_at), observed once, at the end.',
      buckets: QUEUE_WAIT_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'ars_build_info',
      help: 'Always 1; the labels say which service version runs on which Node.',
      labelNames: ['version', 'node_version'],
      registers,
    }).set({ version: serviceVersion(), node_version: process.version }, 1);
    addScrapeGauges(this.registry, sources);
    // Process metrics (CPU, memory, event loop, GC) into this registry only. prom-client's event-loop monitor and
    // GC observer cannot be stopped: each context leaves one behind (one per process in production).
    collectDefaultMetrics({ register: this.registry });
  }

  /** Counts a guarded transition's result when it was applied (a no-op, a refusal or nothing at all counts nothing). */
  transitioned(path: TransitionPath, result: { kind: string; run?: FinishedRun } | null | undefined): void {
    if (result?.kind !== 'applied' || !result.run) return;
    this.entered(path, result.run.status);
    this.finished(result.run);
  }

  /** A run that entered a terminal status: its duration and, if it started, its queue wait (once per run). */
  finished(run: FinishedRun): void {
    if (!TERMINAL.has(run.status)) return;
    if (run.duration_ms !== null && run.duration_ms !== undefined) this.#runDuration.observe({ status: run.status }, Number(run.duration_ms) / 1000);
    if (run.started_at && run.created_at) {
      this.#queueWait.observe(Math.max(0, new Date(run.started_at).getTime() - new Date(run.created_at).getTime()) / 1000);
    }
  }

  /** Counts `count` runs that entered `status` (an insert, a set-based write, a move already known applied). */
  entered(path: TransitionPath, status: string, count = 1): void {
    if (count > 0) this.#transitions.inc({ status, path }, count);
  }

  /** One answered request. `route` is the route's pattern (never the URL); undefined when no route matched. */
  request(method: string, route: string | undefined, statusCode: number, ms: number): void {
    this.#requests.observe({ method, route: route ?? 'unmatched', status_class: `${Math.floor(statusCode / 100)}xx` }, ms / 1000);
  }

  runtimeCall(runtime: string, operation: string, outcome: RuntimeCallOutcome, seconds: number): void {
    this.#runtimeCalls.observe({ runtime, operation, outcome }, seconds);
  }

  rateLimited(route: string | undefined): void {
    this.#rateLimited.inc({ route: route ?? 'unmatched' });
  }

  limiterFailedOpen(): void {
    this.#limiterFailOpen.inc();
  }

  deliveryAttempted(outcome: DeliveryAttemptOutcome): void {
    this.#deliveries.inc({ outcome });
  }

  pollClaimed(lagMs: number): void {
    this.#pollLag.observe(Math.max(0, lagMs) / 1000);
  }

  pruned(table: PrunedTable, rows: number): void {
    if (rows > 0) this.#pruned.inc({ table }, rows);
  }

  /** The text exposition format, with its content type. */
  async exposition(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.registry.contentType, body: await this.registry.metrics() };
  }
}
