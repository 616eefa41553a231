// A webhook-action receiver (a real local HTTP server) and seeding for the outbox suites.
import { randomUUID } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { TestApp } from '../helpers/test-app.ts';
import { generateSigningSecret } from '../../src/events/standard-webhooks.ts';
import { sealedAt } from '../../src/storage/sealed-columns.ts';
import { insertRun } from '../../src/runs/runs-repo.ts';
import { transition, type RunPatch } from '../../src/runs/run-transitions.ts';
import type { RunStatus } from '../../src/runs/run-states.ts';

export interface Received {
  path: string;
  headers: IncomingHttpHeaders;
  rawBody: string;
  body: Record<string, unknown>;
}

export class Receiver {
  readonly received: Received[] = [];
  /** Statuses to answer, in order; once used up, `fallback`. */
  readonly script: number[] = [];
  fallback = 200;
  #server: Server;
  #url = '';
  #waiters: Array<{ n: number; resolve: () => void }> = [];

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        const rawBody = Buffer.concat(chunks).toString('utf8');
        this.received.push({ path: req.url ?? '/', headers: req.headers, rawBody, body: JSON.parse(rawBody) as Record<string, unknown> });
        for (const w of this.#waiters.filter((x) => this.received.length >= x.n)) w.resolve();
        res.writeHead(this.script.shift() ?? this.fallback, { 'content-type': 'text/plain' });
        res.end('thanks');
      });
    });
  }

  get url(): string {
    return this.#url;
  }

  async start(host = '127.0.0.1'): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, host, resolve));
    const addr = this.#server.address();
    if (!addr || typeof addr === 'string') throw new Error('no address');
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${addr.port}`;
    return this;
  }

  /** Resolves once `n` requests have arrived. */
  async count(n: number): Promise<void> {
    if (this.received.length >= n) return;
    await new Promise<void>((resolve) => this.#waiters.push({ n, resolve }));
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}

/** A webhook action as the admin API would create it (admin-api.md "Webhook actions"); returns its secret. */
export async function seedWebhookAction(t: TestApp, agentId: number, onState: string, url: string): Promise<{ id: string; secret: string }> {
  const id = randomUUID();
  const secret = generateSigningSecret();
  await t.db.query('INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc) VALUES ($1, $2, $3, $4, $5)', [
    id,
    agentId,
    onState,
    url,
    t.ctx.secrets.seal(secret, sealedAt('webhook_actions', 'signing_secret_enc', id)),
  ]);
  return { id, secret };
}

/** A run that reaches `to` through the one transition path (which queues its outbox rows). */
export async function runTo(t: TestApp, agentId: number, to: RunStatus, patch: RunPatch = {}): Promise<number> {
  const now = t.ctx.clock.now();
  const run = await insertRun(t.db, { agentId, status: 'running', source: 'trigger', now, startedAt: now, input: { topic: 'x' } });
  const event = to === 'waiting' ? 'waiting' : 'terminal';
  const res = await transition(t.db, run.id, event, to, now, patch, { via: 'admin' });
  if (res.kind !== 'applied') throw new Error(`run ${run.id} did not move to ${to}`);
  return run.id;
}

export interface OutboxState {
  id: number;
  event: string;
  message_id: string;
  attempts: number;
  delivered_at: Date | null;
  failed_at: Date | null;
  last_error: string | null;
  next_attempt_at: Date;
  locked_until: Date | null;
}

export async function outboxFor(t: TestApp, runId: number): Promise<OutboxState[]> {
  const { rows } = await t.db.query<OutboxState>(
    'SELECT id, event, message_id, attempts, delivered_at, failed_at, last_error, next_attempt_at, locked_until FROM outbox WHERE run_id = $1 ORDER BY id',
    [runId],
  );
  return rows;
}
