// A POST whose answer may take minutes (n8n holds the webhook request until its Respond node runs). The caller
// needs two moments: when the runtime has the whole request (the run has started, so a later failure is the
// run's failure, not a failed trigger), and when the answer is complete. undici's request() only exposes the
// second, so this drives the dispatcher with a handler of its own, in undici 8's controller style (the only one it
// takes), which is told `onRequestSent`.
import type { Dispatcher } from 'undici';
import type { Outcome, RuntimeFailure } from './runtime-adapter.ts';
import { fail, transportFailure, type RuntimeHttp } from './http.ts';

export interface HeldAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

export interface HeldCall {
  /** Resolves once the request is fully written on a connected socket or an answer began, or why not. */
  accepted: Promise<Outcome<void>>;
  /** Settles once with the complete answer or why there is none. Never rejects. */
  answer: Promise<Outcome<HeldAnswer>>;
  /** True when the caller's signal, not the runtime or the network, ended the call. */
  abortedByCaller(): boolean;
}

export interface HeldCallRequest {
  url: URL;
  headers: Record<string, string>;
  body: Buffer;
  /** The only deadline besides the backstop: the wait window or the running timeout, or a cancel. */
  signal?: AbortSignal;
  maxBytes: number;
  what: string;
}

/** The failure message when the caller's signal, not the runtime, ended the call. */
export const ABORTED_MESSAGE = 'aborted before the runtime answered';

export function startHeldCall(http: RuntimeHttp, req: HeldCallRequest): HeldCall {
  let settleAccepted!: (o: Outcome<void>) => void;
  let settleAnswer!: (o: Outcome<HeldAnswer>) => void;
  const accepted = new Promise<Outcome<void>>((r) => (settleAccepted = r));
  const answer = new Promise<Outcome<HeldAnswer>>((r) => (settleAnswer = r));
  // The handler keeps only what it needs later; the payload buffer belongs to undici's request alone.
  const handler = new HeldHandler({ what: req.what, maxBytes: req.maxBytes, signal: req.signal }, settleAccepted, settleAnswer);

  const call: HeldCall = { accepted, answer, abortedByCaller: () => handler.byCaller };
  if (req.signal?.aborted) {
    handler.abortByCaller();
    return call;
  }
  req.signal?.addEventListener('abort', handler.onSignal, { once: true });
  const { heldCallMaxMs } = http.timeouts;
  http.dispatcher.dispatch(
    {
      origin: req.url.origin,
      path: `${req.url.pathname}${req.url.search}`,
      method: 'POST',
      headers: req.headers,
      body: req.body,
      // No short timer of our own: n8n answers when the workflow's Respond node runs (runtimes.md).
      headersTimeout: heldCallMaxMs,
      bodyTimeout: heldCallMaxMs,
    },
    handler,
  );
  return call;
}

// Kept deliberately small: thousands of these may be open at once, each holding only its answer chunks.
class HeldHandler implements Dispatcher.DispatchHandler {
  #controller: Dispatcher.DispatchController | null = null;
  #isAccepted = false;
  #done = false;
  byCaller = false;
  #tooLarge = false;
  #status = 0;
  #headers: Record<string, string> = {};
  #chunks: Buffer[] = [];
  #size = 0;

  constructor(
    private readonly req: Pick<HeldCallRequest, 'what' | 'maxBytes' | 'signal'>,
    private readonly settleAccepted: (o: Outcome<void>) => void,
    private readonly settleAnswer: (o: Outcome<HeldAnswer>) => void,
  ) {}

  readonly onSignal = (): void => this.abortByCaller();

  abortByCaller(): void {
    if (this.#done) return;
    this.byCaller = true;
    // Not yet connected: settle now rather than after a connect that may take the whole connect timeout.
    if (this.#controller) this.#controller.abort(new Error('aborted'));
    else this.#finish(fail('timeout', `${this.req.what}: ${ABORTED_MESSAGE}`));
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    this.#controller = controller;
    if (this.#done) controller.abort(new Error('aborted'));
  }

  onRequestSent(): void {
    this.#accept();
  }

  onResponseStart(controller: Dispatcher.DispatchController, status: number, parsed: Record<string, string | string[] | undefined>): void {
    if (status < 200) return; // 1xx informational; the real answer follows
    this.#status = status;
    // The raw pairs when undici has them: values read as UTF-8 (its parsed object reads them as latin1).
    const raw = controller.rawHeaders;
    if (Array.isArray(raw)) {
      for (let i = 0; i + 1 < raw.length; i += 2) {
        this.#addHeader(raw[i]!.toString('latin1').toLowerCase(), Buffer.isBuffer(raw[i + 1]) ? raw[i + 1]!.toString('utf8') : String(raw[i + 1]));
      }
    } else {
      for (const [name, value] of Object.entries(parsed)) {
        for (const v of Array.isArray(value) ? value : value === undefined ? [] : [value]) this.#addHeader(name, v);
      }
    }
    this.#accept(); // an early answer (a 404 before the body went out) also means the runtime saw the call
  }

  onResponseData(controller: Dispatcher.DispatchController, chunk: Buffer): void {
    this.#size += chunk.length;
    if (this.#size > this.req.maxBytes) {
      this.#tooLarge = true;
      controller.abort(new Error('answer too large'));
      return;
    }
    this.#chunks.push(chunk);
  }

  onResponseEnd(): void {
    const body = Buffer.concat(this.#chunks, this.#size);
    this.#chunks = [];
    this.#finish({ ok: true, value: { status: this.#status, headers: this.#headers, body } });
  }

  onResponseError(_controller: Dispatcher.DispatchController, err: Error): void {
    if (this.#done) return;
    this.#chunks = [];
    let failure: RuntimeFailure;
    if (this.#tooLarge) failure = { kind: 'bad_response', message: `${this.req.what}: answer larger than ${this.req.maxBytes} bytes` };
    else if (this.byCaller) failure = { kind: 'timeout', message: `${this.req.what}: ${ABORTED_MESSAGE}` };
    else failure = transportFailure(err, this.req.what);
    this.#finish({ ok: false, failure });
  }

  #addHeader(name: string, value: string): void {
    this.#headers[name] = this.#headers[name] === undefined ? value : `${this.#headers[name]}, ${value}`;
  }

  #accept(): void {
    if (this.#isAccepted || this.#done) return;
    this.#isAccepted = true;
    this.settleAccepted({ ok: true, value: undefined });
  }

  #finish(outcome: Outcome<HeldAnswer>): void {
    if (this.#done) return;
    this.#done = true;
    this.req.signal?.removeEventListener('abort', this.onSignal);
    // Failing before acceptance fails the trigger itself; afterwards it is the run's answer.
    if (!this.#isAccepted) {
      this.#isAccepted = true;
      this.settleAccepted(outcome.ok ? { ok: true, value: undefined } : outcome);
    }
    this.settleAnswer(outcome);
  }
}
