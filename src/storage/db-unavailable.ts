// Which failures mean "the database cannot be reached or did not answer in time" (decisions.md "Bounded waits"):
// the request itself was fine and may be retried, so it is answered 503 with Retry-After instead of a 500.
// Everything else (a constraint, a bad statement) stays a surprise.

/** Socket errors of a connection that could not be made or was cut. */
const SOCKET_ERRORS = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/**
 * SQLSTATEs of a server that is going away or refusing work, beyond class 08 (connection exception): admin
 * shutdown, crash shutdown, cannot connect now (starting up or shutting down), statement timeout (and cancel),
 * too many connections, and a transaction killed for sitting idle.
 */
const UNAVAILABLE_SQLSTATES = new Set(['57P01', '57P02', '57P03', '57014', '53300', '25P03']);

/** What node-postgres and its pool say when a connection never came or died without a SQLSTATE. */
const DRIVER_MESSAGES = /^(timeout exceeded when trying to connect|Connection terminated|Client has encountered a connection error|Client was closed and is not queryable|Cannot use a pool after calling end)/;

export function isDatabaseUnavailable(err: unknown): boolean {
  return unavailable(err, 0);
}

function unavailable(err: unknown, depth: number): boolean {
  if (typeof err !== 'object' || err === null || depth > 3) return false;
  const { code, message, errors, cause } = err as { code?: unknown; message?: unknown; errors?: unknown; cause?: unknown };
  if (typeof code === 'string' && (SOCKET_ERRORS.has(code) || UNAVAILABLE_SQLSTATES.has(code) || /^08[0-9A-Z]{3}$/.test(code))) return true;
  if (typeof message === 'string' && DRIVER_MESSAGES.test(message)) return true;
  // Node reports a connect that tried several addresses (localhost: ::1 and 127.0.0.1) as an AggregateError.
  if (Array.isArray(errors) && errors.some((e) => unavailable(e, depth + 1))) return true;
  return unavailable(cause, depth + 1);
}
