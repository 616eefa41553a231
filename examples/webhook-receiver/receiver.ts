// A receiver for the service's webhook actions: verifies the Standard Webhooks signature (standardwebhooks.com),
// refuses stale or replayed deliveries, and hands `{run, output}` to a handler. Node built-ins only, so it can be
// copied out of this repository as it is. Run it:
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/webhook-receiver/receiver.ts
//
// then point a webhook action at http://<this host>:4000/ (examples/README.md).
import { createHmac, timingSafeEqual } from 'node:crypto';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';

/** What the service POSTs (`run` is the admin run view; `waiting` events add `run_url` and `waiting`). */
export interface WebhookEvent {
  /** The `webhook-id` header: the same on every retry of one event, so it is the deduplication key. */
  id: string;
  run: { runId: number; agentId: number; status: string; [field: string]: unknown };
  output: unknown;
  body: Record<string, unknown>;
}

export interface ReceiverOptions {
  /** The action's signing secret, `whsec_<base64>`, shown once when the action is created. */
  secret: string;
  onEvent: (event: WebhookEvent) => void | Promise<void>;
  /** How far the signed timestamp may be from this machine's clock, either way (replay window). */
  toleranceSeconds?: number;
  now?: () => Date;
}

export type Verdict = { ok: true } | { ok: false; reason: string };

/** Larger than any run event the service sends in practice; a bigger body is not kept, and answered 413. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** Deliveries are at-least-once: ids seen recently are remembered (a bounded set, oldest forgotten first). */
const REMEMBERED_IDS = 10_000;

/**
 * Checks one delivery: the three headers present, the timestamp within the window, and one of the space-separated
 * `v1,<base64>` signatures equal to HMAC-SHA256(key, `${id}.${timestamp}.${body}`), compared in constant time.
 * The body must be the exact bytes received: parsing and re-serialising JSON changes them.
 */
export function verifySignature(
  headers: IncomingHttpHeaders,
  rawBody: string,
  secret: string,
  now: Date,
  toleranceSeconds = 300,
): Verdict {
  const id = single(headers['webhook-id']);
  const timestamp = single(headers['webhook-timestamp']);
  const signatures = single(headers['webhook-signature']);
  if (!id || !timestamp || !signatures) return { ok: false, reason: 'missing webhook-id, webhook-timestamp or webhook-signature' };
  if (!/^\d{1,15}$/.test(timestamp)) return { ok: false, reason: 'malformed webhook-timestamp' };
  if (Math.abs(Math.floor(now.getTime() / 1000) - Number(timestamp)) > toleranceSeconds) {
    return { ok: false, reason: 'webhook-timestamp outside the tolerance window' };
  }
  const key = Buffer.from(secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret, 'base64');
  const expected = createHmac('sha256', key).update(`${id}.${timestamp}.${rawBody}`).digest();
  let matched = false;
  for (const entry of signatures.split(' ')) {
    const [version, value] = entry.split(',', 2);
    if (version !== 'v1' || !value) continue;
    const candidate = Buffer.from(value, 'base64');
    // timingSafeEqual needs equal lengths; every candidate is checked, no early exit.
    if (candidate.length === expected.length && timingSafeEqual(candidate, expected)) matched = true;
  }
  return matched ? { ok: true } : { ok: false, reason: 'no matching signature' };
}

/** An HTTP server that answers 2xx only for a verified, well-formed event; the service retries anything else. */
export function createReceiver(opts: ReceiverOptions): Server {
  const seen = new Set<string>();
  const now = opts.now ?? (() => new Date());
  return createServer((req, res) => {
    const reply = (status: number, body: Record<string, unknown>): void => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.method !== 'POST') return reply(405, { error: 'POST only' });
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) return reply(413, { error: 'body too large' });
      const rawBody = Buffer.concat(chunks).toString('utf8');
      const verdict = verifySignature(req.headers, rawBody, opts.secret, now(), opts.toleranceSeconds);
      if (!verdict.ok) return reply(401, { error: verdict.reason });
      const id = single(req.headers['webhook-id'])!;
      // A retry of an event already handled (our 2xx was lost on the way back): acknowledge, do nothing twice.
      if (seen.has(id)) return reply(200, { received: true, duplicate: true });
      const event = parseEvent(id, rawBody);
      if (!event) return reply(400, { error: 'body is not {run, output}' });
      Promise.resolve(opts.onEvent(event)).then(
        () => {
          remember(seen, id);
          reply(200, { received: true });
        },
        // The handler failed: a 500 makes the service try again later (its retry schedule runs for 24 hours).
        (err: unknown) => reply(500, { error: err instanceof Error ? err.message : 'handler failed' }),
      );
    });
  });
}

function parseEvent(id: string, rawBody: string): WebhookEvent | null {
  let body: unknown;
  try {
    body = JSON.parse(rawBody);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null || !('run' in body) || !('output' in body)) return null;
  const { run, output } = body as { run: unknown; output: unknown };
  if (typeof run !== 'object' || run === null || typeof (run as { runId?: unknown }).runId !== 'number') return null;
  return { id, run: run as WebhookEvent['run'], output, body: body as Record<string, unknown> };
}

function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value!);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value.join(' ') : value;
}

// Started as a program (not imported by a test): listen and print every event.
if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const secret = process.env.WEBHOOK_SECRET;
  if (!secret?.startsWith('whsec_')) {
    console.error('Set WEBHOOK_SECRET to the webhook action\'s signing secret (whsec_…).');
    process.exit(2);
  }
  const port = Number(process.env.PORT ?? 4000);
  const server = createReceiver({
    secret,
    onEvent: ({ id, run, output }) => {
      console.log(`${new Date().toISOString()} ${id}: run ${run.runId} of agent ${run.agentId} is ${run.status}`);
      console.log(JSON.stringify(output, null, 2));
    },
  });
  server.listen(port, () => console.log(`webhook receiver listening on http://0.0.0.0:${port}/`));
}
