// A receiver for the service's webhook actions: the SDK's verifier (`@agent-run-service/sdk/webhooks`) checks the
// Standard Webhooks signature (standardwebhooks.com) and the replay window; this file adds the HTTP server around
// it, deduplication on webhook-id and the answers the service's retries expect. Run it:
//
//   WEBHOOK_SECRET=whsec_… PORT=4000 npx tsx examples/webhook-receiver/receiver.ts
//
// then point a webhook action at http://<this host>:4000/ (examples/README.md).
import { createServer, type Server } from 'node:http';
import { pathToFileURL } from 'node:url';
import { verifyWebhookAction, WebhookVerificationError, type WebhookAction } from '@agent-run-service/sdk/webhooks';

/** What the service POSTs, verified: `id` (webhook-id) is the deduplication key; `waiting` events add `run_url`. */
export type WebhookEvent = WebhookAction;

export interface ReceiverOptions {
  /** The action's signing secret, `whsec_<base64>`, shown once when the action is created. */
  secret: string;
  onEvent: (event: WebhookEvent) => void | Promise<void>;
  /** How far the signed timestamp may be from this machine's clock, either way (replay window). */
  toleranceSeconds?: number;
  now?: () => Date;
}

/** Larger than any run event the service sends in practice; a bigger body is not kept, and answered 413. */
const MAX_BODY_BYTES = 5 * 1024 * 1024;
/** Deliveries are at-least-once: ids seen recently are remembered (a bounded set, oldest forgotten first). */
const REMEMBERED_IDS = 10_000;

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
      let event: WebhookEvent;
      try {
        // The exact bytes received: JSON parsed and serialised again would no longer match the signature.
        event = verifyWebhookAction(opts.secret, req.headers, Buffer.concat(chunks), { now: now(), toleranceSeconds: opts.toleranceSeconds });
      } catch (err) {
        // Not genuine, or stale: 401. A genuine body that is not an event: 400. Anything else (a malformed
        // secret) is this receiver's fault: 500, and the service tries again later.
        if (!(err instanceof WebhookVerificationError)) return reply(500, { error: 'receiver misconfigured' });
        return reply(err.reason === 'body' ? 400 : 401, { error: err.message });
      }
      // A retry of an event already handled (our 2xx was lost on the way back): acknowledge, do nothing twice.
      if (seen.has(event.id)) return reply(200, { received: true, duplicate: true });
      Promise.resolve(opts.onEvent(event)).then(
        () => {
          remember(seen, event.id);
          reply(200, { received: true });
        },
        // The handler failed: a 500 makes the service try again later (its retry schedule runs for 24 hours).
        (err: unknown) => reply(500, { error: err instanceof Error ? err.message : 'handler failed' }),
      );
    });
  });
}

function remember(seen: Set<string>, id: string): void {
  seen.add(id);
  if (seen.size > REMEMBERED_IDS) seen.delete(seen.values().next().value!);
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
