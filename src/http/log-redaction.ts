// Secrets never reach a log line (decisions.md "Errors and logs"). Credentials travel in headers, which request
// logs leave out; the few that travel in a path are masked here, by one list. Database errors are logged without
// the row they were about (serializeError).
import type { FastifyRequest } from 'fastify';

/** Path segments that are credentials: `$1` is what stays, the segment after it is masked. */
const SECRETS_IN_PATH: readonly RegExp[] = [
  /(\/runs\/webhook(?:-and-wait)?\/)[^/?#]+/, // the webhook token (spec 4.6)
  /(\/zones\/[^/?#]+\/framed\/)[^/?#]+/, // a console frame's pass: it signs its holder in to that zone app (issue 35)
];

export function redactUrl(url: string): string {
  const secrets = SECRETS_IN_PATH.filter((pattern) => pattern.test(url));
  if (secrets.length === 0) return url;
  // Whoever calls such a URL may carry their own secrets in its query string too (third-party webhook senders, a
  // zone app's own links): it is masked whole.
  return secrets.reduce((masked, pattern) => masked.replace(pattern, '$1[REDACTED]'), url).replace(/\?.*$/s, '?[REDACTED]');
}

/** What of a PostgreSQL error (pg or PGlite) is logged: where it happened, never what the row held. */
const DATABASE_FIELDS = ['code', 'severity', 'constraint', 'schema', 'table', 'column', 'dataType', 'routine'] as const;
/**
 * Never logged, from any error: PostgreSQL's `detail` ("Failing row contains (…)", "Key (…)=(…)"), `where`,
 * `hint` and positions, the internal query, and the statement and parameters a driver attaches (PGlite).
 */
const ROW_BEARING = new Set(['detail', 'where', 'hint', 'position', 'internalPosition', 'internalQuery', 'query', 'params', 'parameters', 'queryOptions', 'file', 'line']);
const MAX_CAUSE_DEPTH = 5;

function isErrorLike(v: unknown): v is Error {
  return v instanceof Error || (typeof v === 'object' && v !== null && typeof (v as Error).message === 'string' && 'stack' in v);
}

function isDatabaseError(err: Error): boolean {
  const { code, severity } = err as { code?: unknown; severity?: unknown };
  return typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && typeof severity === 'string';
}

/**
 * Data exceptions (SQLSTATE class 22) quote the offending value in their message (`invalid input syntax for
 * type uuid: "…"`, `value "…" is out of range for type integer`): the quoted part is masked. Other classes quote
 * only names (constraint, column, relation), which stay.
 */
export function redactDatabaseMessage(code: string, message: string): string {
  return code.startsWith('22') ? message.replace(/"[\s\S]*"/, '"[REDACTED]"') : message;
}

/** pino's `err` serializer for every logger of the service. */
export function serializeError(err: unknown, depth = 0): unknown {
  if (!isErrorLike(err)) return err;
  if (depth > MAX_CAUSE_DEPTH) return { type: 'Error', message: '[cause chain cut]' };
  const type = typeof err.constructor === 'function' ? err.constructor.name : err.name;
  if (isDatabaseError(err)) {
    const e = err as Error & Record<(typeof DATABASE_FIELDS)[number], unknown>;
    const message = redactDatabaseMessage(String(e.code), err.message);
    const out: Record<string, unknown> = { type, message, stack: err.stack?.replace(err.message, message) };
    for (const key of DATABASE_FIELDS) if (e[key] !== undefined) out[key] = e[key];
    return out;
  }
  const out: Record<string, unknown> = { type, message: err.message, stack: err.stack };
  for (const key in err) {
    if (ROW_BEARING.has(key) || key in out) continue;
    const value = (err as unknown as Record<string, unknown>)[key];
    out[key] = isErrorLike(value) ? serializeError(value, depth + 1) : value;
  }
  if (err.cause !== undefined && !('cause' in out)) out.cause = serializeError(err.cause, depth + 1);
  if (Array.isArray((err as AggregateError).errors)) out.errors = (err as AggregateError).errors.map((e: unknown) => serializeError(e, depth + 1));
  return out;
}

export const logSerializers = {
  req(req: FastifyRequest) {
    return { method: req.method, url: redactUrl(req.url), requestId: req.id, remoteAddress: req.ip };
  },
  err: (err: unknown) => serializeError(err),
} as const;

/** Paths pino must censor if a secret-bearing object is ever logged whole. */
export const logRedactPaths: readonly string[] = [
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
