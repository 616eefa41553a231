// A runtime's streamed answer (a download) read through undici's `dispatch`, with no body stream between the
// socket and the caller (decisions.md "Download path"). undici's `request` hands the bytes to a Readable, and
// piping that into the response adds a stream stage (its buffer, events and pause/resume) on every chunk. Here
// each chunk the parser delivers is written straight into the destination,
// and the upstream is paused (undici stops reading its socket, so TCP holds the runtime back) until the
// destination drains.
//
// The body is still a Readable, so anything that reads it as one (the first-byte wait, the reason read out of a
// JSON answer, tests, `for await`) can; `pipe(dest)` is the fast path: whatever was already buffered is written
// first, then every chunk goes straight to `dest`.
import { Readable } from 'node:stream';
import type { IncomingHttpHeaders } from 'node:http';
import type { Dispatcher } from 'undici';
import { dispatchOptions, type DispatchedRequest } from './whole-answer.ts';

export interface StreamRequest extends DispatchedRequest {
  method: 'POST';
  body: string;
  /** Bounds only the wait for the answer to begin; once it has, aborting it changes nothing. */
  signal?: AbortSignal;
}

export interface StreamedAnswer {
  status: number;
  headers: IncomingHttpHeaders;
  body: UpstreamBody;
}

/** The runtime's bytes: a Readable that counts them and pipes by writing each chunk straight into its destination. */
export class UpstreamBody extends Readable {
  #received = 0;
  readonly #controller: Dispatcher.DispatchController;
  #sink: NodeJS.WritableStream | null = null;
  #endSink = true;
  #upstreamEnded = false;
  /** Paused because the Readable's own buffer is full (before a pipe). */
  #pausedForBuffer = false;
  /** Paused until the destination drains. */
  #awaitingDrain = false;
  readonly #drained = (): void => {
    this.#awaitingDrain = false;
    if (!this.destroyed) this.#controller.resume();
  };

  constructor(controller: Dispatcher.DispatchController) {
    super();
    this.#controller = controller;
  }

  /** Bytes received from the runtime so far. */
  get received(): number {
    return this.#received;
  }

  override _read(): void {
    if (this.#pausedForBuffer) {
      this.#pausedForBuffer = false;
      this.#controller.resume();
    }
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    // Closes the runtime's answer and its socket (a keep-alive socket cannot be reused mid-body).
    if (!this.#upstreamEnded) this.#controller.abort(err ?? new Error('the download was closed before its end'));
    callback(err);
  }

  /** A chunk from undici's parser. */
  deliver(chunk: Buffer): void {
    if (this.destroyed) return;
    this.#received += chunk.length;
    const sink = this.#sink;
    if (sink) {
      if (!sink.write(chunk)) this.#waitForDrain(sink);
    } else if (!this.push(chunk)) {
      this.#pausedForBuffer = true;
      this.#controller.pause();
    }
  }

  /** The runtime's answer is complete. */
  complete(): void {
    this.#upstreamEnded = true;
    if (this.destroyed) return;
    if (this.#sink && this.#endSink) this.#sink.end();
    this.push(null);
  }

  /** The runtime broke off mid-answer, or its idle timeout fired. */
  breakOff(err: Error): void {
    this.#upstreamEnded = true;
    this.destroy(err);
  }

  /** Writes what is buffered, then every further chunk straight into `dest`, pausing the runtime until it drains. */
  override pipe<T extends NodeJS.WritableStream>(dest: T, options?: { end?: boolean }): T {
    if (this.#sink) throw new Error('an upstream body pipes to one destination only');
    // Cleared first: reading the buffer below must not resume the runtime (a chunk delivered meanwhile would
    // overtake the buffered ones).
    const wasPaused = this.#pausedForBuffer;
    this.#pausedForBuffer = false;
    this.#sink = dest;
    this.#endSink = options?.end !== false;
    let full = false;
    for (let chunk = this.read() as Buffer | null; chunk !== null; chunk = this.read() as Buffer | null) {
      if (!dest.write(chunk)) full = true;
    }
    // Flowing with an empty buffer: chunks no longer enter it, and 'end' follows the runtime's last chunk.
    this.resume();
    if (this.#upstreamEnded) {
      if (this.#endSink && !this.destroyed) dest.end();
    } else if (full) {
      this.#waitForDrain(dest);
    } else if (wasPaused) {
      this.#controller.resume();
    }
    return dest;
  }

  #waitForDrain(sink: NodeJS.WritableStream): void {
    this.#controller.pause();
    if (this.#awaitingDrain) return;
    this.#awaitingDrain = true;
    sink.once('drain', this.#drained);
  }
}

/** Sends the request; resolves when the answer's headers arrive, rejects with undici's error or the abort reason. */
export function openStream(dispatcher: Dispatcher, req: StreamRequest): Promise<StreamedAnswer> {
  return new Promise((resolve, reject) => {
    let controller: Dispatcher.DispatchController | null = null;
    let body: UpstreamBody | null = null;
    let settled = false;
    const onAbort = (): void => {
      const reason = abortReason(req.signal);
      if (controller) controller.abort(reason);
      else settle(reason); // not on a socket yet: undici is told once it starts the request
    };
    const settle = (err: Error | null, answer?: StreamedAnswer): void => {
      if (settled) return;
      settled = true;
      req.signal?.removeEventListener('abort', onAbort);
      if (err) reject(err);
      else resolve(answer!);
    };
    if (req.signal?.aborted) return reject(abortReason(req.signal));
    req.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      dispatcher.dispatch(
        dispatchOptions(req),
        {
          onRequestStart(c) {
            controller = c;
            if (settled) c.abort(abortReason(req.signal)); // aborted before it reached a socket
          },
          onResponseStart(c, statusCode, headers) {
            if (statusCode < 200) return; // informational: the answer is still to come
            body = new UpstreamBody(c);
            settle(null, { status: statusCode, headers, body });
          },
          onResponseData(_c, chunk) {
            body?.deliver(chunk);
          },
          onResponseEnd() {
            body?.complete();
          },
          onResponseError(_c, err) {
            if (body) body.breakOff(err);
            else settle(err);
          },
        },
      );
    } catch (err) {
      settle(err instanceof Error ? err : new Error(String(err))); // undici refused the request itself
    }
  });
}

function abortReason(signal: AbortSignal | undefined): Error {
  const reason: unknown = signal?.reason;
  return reason instanceof Error ? reason : new DOMException('This operation was aborted', 'AbortError');
}
