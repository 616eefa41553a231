// The caller's side (spec 4.1-4.5): start runs with the agent's ingest key, record runs started elsewhere.
// Every start carries an Idempotency-Key, one per logical call, so the retries in http.ts never make a second run.
import type {
  IngestBody, IngestResult, RegisterAccepted, RegisterBody, SyncCompleted, SyncTimedOut, TriggerAccepted, TriggerAndWaitBody,
} from './api-types.ts';
import { AgentRunError } from './errors.ts';
import { readJson, send, transport, type FetchLike, type RetryOptions, type Transport } from './http.ts';

export interface AgentRunClientOptions {
  /** The service's origin, e.g. `https://runs.example.com`. */
  baseUrl: string;
  /** The agent's `ingest_api_key`. */
  ingestKey: string;
  agentId: number;
  fetch?: FetchLike;
  retries?: RetryOptions;
}

export interface StartOptions {
  /** Sets the run's `created_by` when the user is a member of the agent's organization (spec 4.1). */
  userId?: string;
  /** Reuse a key across your own retries (a job queue's id); by default each call makes a new UUID. */
  idempotencyKey?: string;
  signal?: AbortSignal;
}

export interface WaitOptions extends StartOptions {
  /** The wait window asked for; the service caps it (spec 8.3). */
  timeoutMs?: number;
}

/** `replayed`: the service answered from an earlier request with the same Idempotency-Key. */
export type Triggered = TriggerAccepted & { replayed: boolean };

export type WaitResult =
  | { kind: 'completed'; run: SyncCompleted; replayed: boolean }
  | { kind: 'timed_out'; runId: number; status: SyncTimedOut['status']; replayed: boolean };

export interface Download {
  runId: number;
  filename: string | undefined;
  contentType: string;
  /** Bytes as the runtime sends them; read it to the end or cancel it. */
  body: ReadableStream<Uint8Array>;
}

type Input = Record<string, unknown>;

export class AgentRunClient {
  readonly #base: string;
  readonly #auth: Record<string, string>;
  readonly #runs: string;
  readonly #http: Transport;

  constructor(opts: AgentRunClientOptions) {
    this.#base = opts.baseUrl.replace(/\/+$/, '');
    this.#auth = { authorization: `Bearer ${opts.ingestKey}` };
    this.#runs = `${this.#base}/api/agents/${opts.agentId}/runs`;
    this.#http = transport(opts.fetch, opts.retries);
  }

  /** Starts a run and returns at once (spec 4.1). */
  async trigger(input: Input = {}, opts: StartOptions = {}): Promise<Triggered> {
    const res = await this.#start('trigger', { input, userId: opts.userId }, opts);
    return { ...(await readJson<TriggerAccepted>(res)), replayed: replayed(res) };
  }

  /**
   * Starts a run and waits for its end (spec 4.2). `completed` means the run ended within the window: read
   * `run.status` (completed, failed or cancelled). A window that ends first is not an error (spec 8.3): the run
   * goes on and `timed_out` says where it is. A workflow that never answered (504) throws AgentRunError with the
   * `runId`.
   */
  async triggerAndWait(input: Input = {}, opts: WaitOptions = {}): Promise<WaitResult> {
    const body: TriggerAndWaitBody = { input, userId: opts.userId, timeoutMs: opts.timeoutMs };
    const res = await this.#start('trigger-and-wait', body, opts);
    if (res.status === 202) {
      const timedOut = await readJson<SyncTimedOut>(res);
      return { kind: 'timed_out', runId: timedOut.runId, status: timedOut.status, replayed: replayed(res) };
    }
    if (res.status === 200) return { kind: 'completed', run: await readJson<SyncCompleted>(res), replayed: replayed(res) };
    throw unexpected(res);
  }

  /** Starts a run of a file agent and streams its file (spec 4.3); the bytes are never stored by the service. */
  async triggerAndDownload(input: Input = {}, opts: WaitOptions = {}): Promise<Download> {
    const res = await this.#start('trigger-and-download', { input, userId: opts.userId, timeoutMs: opts.timeoutMs }, opts);
    const runId = Number(res.headers.get('x-run-id'));
    if (res.status !== 200 || !res.body || !Number.isSafeInteger(runId)) throw unexpected(res);
    return {
      runId,
      filename: filenameOf(res.headers.get('content-disposition')),
      contentType: res.headers.get('content-type') ?? 'application/octet-stream',
      body: res.body,
    };
  }

  /** Records a run you started on the runtime yourself; the same externalRunId answers the same run (spec 4.4). */
  async register(externalRunId: string, fields: Omit<RegisterBody, 'externalRunId'> = {}): Promise<RegisterAccepted> {
    const res = await send(this.#http, `${this.#runs}/register`, { method: 'POST', headers: this.#auth, body: { ...fields, externalRunId } });
    return readJson<RegisterAccepted>(res);
  }

  /** Reports a standalone agent's run; repeats with the same externalRunId update it (spec 4.5). */
  async ingest(externalRunId: string, report: Omit<IngestBody, 'externalRunId'>): Promise<IngestResult> {
    const res = await send(this.#http, `${this.#runs}/ingest`, { method: 'POST', headers: this.#auth, body: { ...report, externalRunId } });
    return readJson<IngestResult>(res);
  }

  #start(path: string, body: object, opts: StartOptions): Promise<Response> {
    // One key for every attempt of this call: that is what makes retrying a start safe.
    const key = opts.idempotencyKey ?? crypto.randomUUID();
    return send(this.#http, `${this.#runs}/${path}`, {
      method: 'POST', headers: { ...this.#auth, 'idempotency-key': key }, body, signal: opts.signal,
    });
  }
}

function replayed(res: Response): boolean {
  return res.headers.get('idempotent-replayed') === 'true';
}

function unexpected(res: Response): AgentRunError {
  void res.body?.cancel().catch(() => undefined);
  return new AgentRunError(`unexpected answer ${res.status}`, res.status, 'unexpected_response', res.headers.get('x-request-id') ?? undefined);
}

/** The file name of a Content-Disposition: `filename*` (RFC 6266, UTF-8) wins over `filename`. */
export function filenameOf(disposition: string | null): string | undefined {
  if (!disposition) return undefined;
  const extended = /filename\*\s*=\s*UTF-8''([^;]+)/i.exec(disposition);
  if (extended) {
    try {
      return decodeURIComponent(extended[1]!.trim());
    } catch {
      // a malformed escape: fall back to the plain parameter
    }
  }
  const plain = /filename\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^;\s]+))/i.exec(disposition);
  if (!plain) return undefined;
  return plain[1] !== undefined ? plain[1].replace(/\\(.)/g, '$1') : plain[2];
}
