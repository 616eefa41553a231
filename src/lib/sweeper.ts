import type { FastifyBaseLogger } from 'fastify';
import { inBackground } from '../tracing/spans.ts';

/** Runs `work` every ~intervalMs (±10% jitter), never overlapping itself; stop() waits for a running pass. */
export class Sweeper {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    readonly name: string,
    private readonly intervalMs: number,
    private readonly work: () => Promise<unknown>,
    private readonly log: FastifyBaseLogger,
  ) {}

  start(): void {
    this.stopped = false;
    this.arm();
  }

  /** Runs one pass now (tests, and a nudge after a relevant write). */
  async runOnce(): Promise<void> {
    if (this.running) return this.running;
    // Never in the context of the request that nudged it (tracing/spans.ts).
    this.running = inBackground(() => this.work())
      .then(() => undefined)
      .catch((err: unknown) => this.log.error({ err, sweeper: this.name }, 'sweep failed'))
      .finally(() => (this.running = null));
    return this.running;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }

  private arm(): void {
    if (this.stopped) return;
    const delay = this.intervalMs * (0.9 + Math.random() * 0.2);
    this.timer = setTimeout(() => void this.runOnce().finally(() => this.arm()), delay);
    this.timer.unref();
  }
}
