// Secrets never reach a log line (decisions.md). Credentials travel in headers, which request logs leave out,
// and the webhook token travels in the path (spec 4.6), which is masked here.
import type { FastifyRequest } from 'fastify';

const WEBHOOK_TOKEN_IN_PATH = /(\/runs\/webhook(?:-and-wait)?\/)[^/?#]+/;

export function redactUrl(url: string): string {
  if (!WEBHOOK_TOKEN_IN_PATH.test(url)) return url;
  // Third-party senders often carry their own secrets in a webhook's query string too: it is masked whole.
  return url.replace(WEBHOOK_TOKEN_IN_PATH, '$1[REDACTED]').replace(/\?.*$/s, '?[REDACTED]');
}

export const logSerializers = {
  req(req: FastifyRequest) {
    return { method: req.method, url: redactUrl(req.url), requestId: req.id, remoteAddress: req.ip };
  },
};

/** Paths pino must censor if a secret-bearing object is ever logged whole. */
export const logRedactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-credentials-token"]',
  'req.headers["x-zone-token"]',
  'headers.authorization',
  '*.apiKey',
  '*.api_key',
  '*.token',
  '*.secret',
];
