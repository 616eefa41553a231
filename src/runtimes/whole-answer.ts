// A runtime API call's answer read whole through undici's `dispatch`: the chunks the parser delivers are kept as
// they come, with no body stream in between. undici's `request` wraps each call in an async resource and hands the
// body to a Readable (its state, events and listeners), and reading that whole costs more again: in the bench,
// dropping both took /trigger's host CPU per request from 0.48–0.53 ms to 0.45–0.48 ms (issue 15; decisions.md
// "Runtime calls read through dispatch"). The download path reads its stream the same way (upstream-stream.ts).
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';

/** What a runtime call hands undici, whether its answer is read whole (here) or streamed (upstream-stream.ts). */
export interface DispatchedRequest {
  url: URL;
  method: 'GET' | 'POST';
  headers: Record<string, string>;
  body?: string;
  /** Time to the answer's headers (undici's own timer). */
  headersTimeout: number;
  /** Idle gap tolerated between chunks (undici's own timer; it does not count time paused by backpressure). */
  bodyTimeout: number;
}

export function dispatchOptions(req: DispatchedRequest): Dispatcher.DispatchOptions {
  return {
    origin: req.url.origin,
    path: req.url.pathname + req.url.search,
    method: req.method,
    headers: req.headers,
    body: req.body,
    headersTimeout: req.headersTimeout,
    bodyTimeout: req.bodyTimeout,
  };
}

export interface WholeRequest extends DispatchedRequest {
  /** Largest body kept; a longer one is cut off: 'too_large'. */
  maxBytes: number;
  /**
   * The whole call's ceiling (ms since the epoch). undici's body timeout is an idle timer, so a runtime trickling a
   * byte at a time would never trip it: each chunk is also checked against this ('too_slow').
   */
  deadline: number;
}

export interface WholeAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: Buffer;
}

/** Sends the request and reads its answer whole; rejects with undici's error when the exchange fails. */
export function fetchWhole(dispatcher: Dispatcher, req: WholeRequest): Promise<WholeAnswer | 'too_large' | 'too_slow'> {
  return new Promise((resolve, reject) => {
    dispatcher.dispatch(dispatchOptions(req), new WholeAnswerHandler(req.maxBytes, req.deadline, resolve, reject));
  });
}

/** A class rather than an object of closures: one allocation per call on a path every runtime call takes. */
class WholeAnswerHandler implements Dispatcher.DispatchHandler {
  #status = 0;
  #headers: IncomingHttpHeaders = {};
  readonly #chunks: Buffer[] = [];
  #size = 0;
  #settled = false;

  constructor(
    private readonly maxBytes: number,
    private readonly deadline: number,
    private readonly resolve: (answer: WholeAnswer | 'too_large' | 'too_slow') => void,
    private readonly reject: (err: Error) => void,
  ) {}

  /** undici reads its newer handler interface (controller, onResponse*) from a handler that has this method. */
  onRequestStart(): void {}

  onResponseStart(_c: Dispatcher.DispatchController, statusCode: number, headers: IncomingHttpHeaders): void {
    this.#status = statusCode; // an informational (1xx) answer is followed by the real one, which overwrites it
    this.#headers = headers;
  }

  onResponseData(c: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.#settled) return;
    this.#size += chunk.length;
    const over = this.#size > this.maxBytes ? 'too_large' : Date.now() > this.deadline ? 'too_slow' : null;
    if (over === null) return void this.#chunks.push(chunk);
    this.#settled = true;
    this.resolve(over);
    c.abort(new Error(`runtime answer ${over === 'too_large' ? 'over its size limit' : 'past its deadline'}`)); // closes the socket
  }

  onResponseEnd(): void {
    if (this.#settled) return;
    this.#settled = true;
    const chunks = this.#chunks;
    const body = chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, this.#size);
    this.resolve({ status: this.#status, headers: this.#headers, body });
  }

  onResponseError(_c: Dispatcher.DispatchController, err: Error): void {
    if (this.#settled) return;
    this.#settled = true;
    this.reject(err);
  }
}
