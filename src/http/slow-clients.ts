// Bounds on how long a client may hold a connection (decisions.md "Slow clients"). Node's HTTP server, through
// Fastify's options:
// - requestTimeout: the whole request, headers and body, must have arrived within ARS_REQUEST_TIMEOUT_MS (a body
//   trickled a byte a second is cut). It covers receiving the request only: a held synchronous answer (up to 5
//   minutes, spec 8.3) is not cut by it;
// - headersTimeout: the headers within ARS_HEADERS_TIMEOUT_MS;
// - keepAliveTimeout: an idle kept-alive connection is closed after ARS_KEEP_ALIVE_TIMEOUT_MS;
// - connectionTimeout: a socket with no byte moving either way for ARS_CONNECTION_IDLE_TIMEOUT_MS is destroyed,
//   whatever it is doing — also a client that stopped reading a large answer. Longer than any held answer.
// Node checks the first two every `connectionsCheckingInterval` (default 30 s, which would let a 30 s timeout
// run to a minute); here every second at most.
// A download whose client stops reading is ended sooner, by sync/write-stall.ts.
import type { ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { FastifyServerOptions } from 'fastify';
import type { Config } from '../config.ts';
import { ApiError, errorBody } from '../errors.ts';

type TimeoutOptions = Pick<FastifyServerOptions, 'requestTimeout' | 'keepAliveTimeout' | 'connectionTimeout'> & {
  http: { headersTimeout: number; requestTimeout: number; connectionsCheckingInterval: number };
};

export function serverTimeouts(config: Config): TimeoutOptions {
  // Node refuses a headers timeout longer than the request timeout; loadConfig says so, this keeps a hand-built
  // Config (tests) from failing at createServer.
  const headersTimeout = Math.min(config.headersTimeoutMs, config.requestTimeoutMs);
  return {
    requestTimeout: config.requestTimeoutMs,
    keepAliveTimeout: config.keepAliveTimeoutMs,
    connectionTimeout: config.connectionIdleTimeoutMs,
    http: { requestTimeout: config.requestTimeoutMs, headersTimeout, connectionsCheckingInterval: Math.min(1_000, headersTimeout) },
  };
}

interface ClientError extends Error {
  code?: string;
}

/**
 * Fastify's clientErrorHandler: a request Node's parser gave up on (a timeout, a malformed request, headers too
 * large) gets the service's own error body, with a request id, then the connection is closed. Nothing is written
 * where an answer has already begun on the socket (it would corrupt it), as Node itself does.
 */
export function clientErrorHandler(nextRequestId: () => string): (err: ClientError, socket: Socket) => void {
  return (err, socket) => {
    if (err.code === 'ECONNRESET' || socket.destroyed) return;
    const inFlight = (socket as Socket & { _httpMessage?: ServerResponse | null })._httpMessage;
    if (socket.writable && !inFlight?.headersSent) {
      const [status, reason, apiError] = answerFor(err.code);
      const body = JSON.stringify(errorBody(apiError, nextRequestId()));
      socket.write(
        `HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json; charset=utf-8\r\n` +
          `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
    }
    socket.destroy();
  };
}

function answerFor(code: string | undefined): [number, string, ApiError] {
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT') {
    return [408, 'Request Timeout', new ApiError('request_timeout', 'the request (headers and body) did not arrive in time')];
  }
  if (code === 'HPE_HEADER_OVERFLOW') return [431, 'Request Header Fields Too Large', new ApiError('headers_too_large', 'the request headers are too large')];
  return [400, 'Bad Request', new ApiError('invalid_body', 'malformed HTTP request')];
}
