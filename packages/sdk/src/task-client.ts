// The task's side (spec 4.8, 4.10): report progress, output, completion, failure and pauses through the run's
// callback, and resolve third-party credentials. Built from the task payload the service sent (spec 2.3 plus
// serviceUrl/callbackUrl/deploymentId) and the agent key, which comes only from the runtime's environment.
import type { CallbackBody, ResolvedCredential, TaskPayload } from './api-types.ts';
import { readJson, send, transport, type FetchLike, type RetryOptions, type Transport } from './http.ts';

export interface TaskClientOptions {
  /** The agent's `agent_api_key`; default `ARS_AGENT_API_KEY` from the environment. Never in the payload (spec 5). */
  agentKey?: string;
  /**
   * The service's origin, if you would rather pin it than trust the payload's. Pin it where anyone can post a
   * payload to your task (an unauthenticated n8n webhook): the agent key is sent to this address.
   */
  serviceUrl?: string;
  fetch?: FetchLike;
  retries?: RetryOptions;
}

/** A type, not an interface, so that it fits the callback body's open object. */
export type TaskError = {
  name?: string;
  message?: string;
  stack?: string;
};

export interface WaitingReport {
  /** The runtime's waitpoint token id (Trigger.dev `wait.createToken()`'s `id`). */
  tokenId: string;
  /** Shown to the reviewer. */
  description: string;
  /** Your review page; waiting notifications link to it (spec 4.8). */
  url?: string;
  /** Shown beside the review form. */
  output?: Record<string, unknown>;
}

type Output = Record<string, unknown>;

export class TaskClient {
  readonly runId: number;
  readonly input: Record<string, unknown>;
  readonly #payload: TaskPayload;
  readonly #callbackUrl: string;
  readonly #serviceUrl: string;
  readonly #auth: Record<string, string>;
  readonly #http: Transport;

  private constructor(payload: TaskPayload, agentKey: string, opts: TaskClientOptions) {
    this.runId = payload.runId;
    this.input = payload.input;
    this.#payload = payload;
    this.#serviceUrl = (opts.serviceUrl ?? payload.serviceUrl).replace(/\/+$/, '');
    this.#callbackUrl = opts.serviceUrl ? `${this.#serviceUrl}/api/runs/${payload.runId}/callback` : payload.callbackUrl;
    this.#auth = { authorization: `Bearer ${agentKey}` };
    this.#http = transport(opts.fetch, opts.retries);
  }

  static fromPayload(payload: TaskPayload, opts: TaskClientOptions = {}): TaskClient {
    // The one environment read of the SDK, and only as a default: a task's configuration is its environment.
    const agentKey = opts.agentKey ?? globalThis.process?.env?.ARS_AGENT_API_KEY;
    if (!agentKey) throw new TypeError('TaskClient needs the agent key: pass agentKey or set ARS_AGENT_API_KEY');
    if (!Number.isSafeInteger(payload?.runId)) throw new TypeError('not a task payload: runId missing');
    if (!opts.serviceUrl && (!payload.serviceUrl || !payload.callbackUrl)) {
      throw new TypeError('the payload has no serviceUrl/callbackUrl (an older service): pass serviceUrl');
    }
    return new TaskClient(payload, agentKey, opts);
  }

  /** The run is running (spec 3: queued → running). */
  started(): Promise<void> {
    return this.#callback({ type: 'started' });
  }

  /** Intermediate output; `outputs` counts output units, the latest value wins (spec 4.8). */
  output(output: Output, opts: { outputs?: number } = {}): Promise<void> {
    return this.#callback({ type: 'output', output, outputs: opts.outputs });
  }

  /** Final output: the run is completed. */
  complete(output: Output, opts: { outputs?: number } = {}): Promise<void> {
    return this.#callback({ type: 'output', output, outputs: opts.outputs, complete: true });
  }

  /** The run failed; an Error is sent as `{name, message, stack}`. */
  fail(error: Error | TaskError | string): Promise<void> {
    const reported: TaskError =
      typeof error === 'string' ? { message: error } : { name: error.name, message: error.message, stack: error.stack };
    return this.#callback({ type: 'output', failed: true, error: reported });
  }

  /** The run waits for a human on `tokenId`; the service resumes it through /waitpoint (spec 4.8, 4.9). */
  waiting(report: WaitingReport): Promise<void> {
    return this.#callback({ type: 'waiting', ...report });
  }

  /**
   * The secret of the agent's connection to `integrationId` (spec 4.10). The credentials token lives 60 minutes
   * from the trigger and is never refreshed (spec 5): resolve what the run needs at its start, not after a pause.
   */
  async credential(integrationId: string): Promise<ResolvedCredential> {
    const connection = this.#payload.connectionIds?.[integrationId];
    if (!connection || !this.#payload.credentialsToken) {
      throw new Error(`the agent has no active connection to ${integrationId}`);
    }
    const url = `${this.#serviceUrl}/api/credentials/${encodeURIComponent(connection.connectionId)}/resolve`;
    const res = await send(this.#http, url, {
      method: 'GET', headers: { ...this.#auth, 'x-credentials-token': this.#payload.credentialsToken },
    });
    return readJson<ResolvedCredential>(res);
  }

  /**
   * The tag to put on a Trigger.dev waitpoint token (`wait.createToken({ tags: [client.waitpointTag()] })`): the
   * service completes a tagged token only for the run it names (its decisions.md "Waitpoints").
   */
  waitpointTag(): string {
    return `ars_run:${this.#payload.deploymentId}:${this.runId}`;
  }

  async #callback(body: CallbackBody): Promise<void> {
    // A repeated callback that changes nothing is answered 200, so retrying one is safe.
    const res = await send(this.#http, this.#callbackUrl, { method: 'POST', headers: this.#auth, body });
    await res.body?.cancel();
  }
}
