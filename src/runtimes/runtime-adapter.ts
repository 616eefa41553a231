// The one interface every runtime kind implements (decisions.md "Runtimes"). Routes and the run state machine
// only ever talk to this interface, so a third runtime kind is a new adapter plus one line in the registry.
import type { Readable } from 'node:stream';

export type RuntimeKind = 'workflow' | 'task';

/** A runtime row with its secrets decrypted, as the adapters need it. */
export interface RuntimeConnection {
  id: number;
  kind: RuntimeKind;
  baseUrl: string;
  apiKey: string | null;
}

/**
 * Spec 2.3: what the service sends to the runtime when it triggers a run. Never holds the agent key.
 * `deploymentId` is our addition (decisions.md "Recovering lost runs"): with `runId` it names the run exactly at a
 * runtime that several deployments share, so a run whose answer was lost is found in the runtime's records.
 * `serviceUrl` and `callbackUrl` are ours too (decisions.md "Task payload"): where the task reaches the service.
 */
export interface TaskPayload {
  runId: number;
  deploymentId?: string;
  /** ARS_PUBLIC_URL: the base of /api/runs/{runId}/waitpoint, /api/credentials/{id}/resolve, … */
  serviceUrl?: string;
  /** `{serviceUrl}/api/runs/{runId}/callback` (spec 4.8). */
  callbackUrl?: string;
  input: unknown;
  connectionIds?: Record<string, { integrationId: string; connectionId: string }>;
  credentialsToken?: string;
}

/**
 * The exact body adapters send (spec 2.3). Copies the known fields only, so anything else a caller put on the
 * object (an agent key, say) can never reach the runtime, whatever the static type said.
 */
export function wirePayload(p: TaskPayload): TaskPayload {
  const out: TaskPayload = { runId: p.runId, input: p.input ?? {} };
  if (p.deploymentId !== undefined) out.deploymentId = p.deploymentId;
  if (p.serviceUrl !== undefined) out.serviceUrl = p.serviceUrl;
  if (p.callbackUrl !== undefined) out.callbackUrl = p.callbackUrl;
  if (p.connectionIds !== undefined) out.connectionIds = p.connectionIds;
  if (p.credentialsToken !== undefined) out.credentialsToken = p.credentialsToken;
  return out;
}

/** The service's own vocabulary; adapters map runtime statuses onto it (runtimes.md). */
export type MappedStatus = 'queued' | 'running' | 'completed' | 'failed' | 'cancelled';

/** Why a call to a runtime did not give a usable answer. Expected outcomes are values, not exceptions. */
export interface RuntimeFailure {
  kind: 'unreachable' | 'timeout' | 'rejected' | 'bad_response' | 'not_supported';
  message: string; // short, for a person; never contains secrets
  httpStatus?: number;
  /** True when the same call may succeed if repeated later (transport errors, 5xx, 429, replica lag). */
  retryable?: boolean;
  /** 429 only: when the runtime says its limit resets (Trigger.dev `x-ratelimit-reset`). */
  retryAt?: Date;
  /**
   * The runtime says it has no such run (Trigger.dev 404 on a run read). Right after our own trigger that can be
   * replica lag; later it is final (poll-run.ts decides, issue 36 item 3).
   */
  notFound?: boolean;
  /**
   * Nothing reached the runtime (the connection was never made), so nothing can have been started by this call.
   * Without it a failed call may have been acted on (a reset, a timeout or a proxy's 5xx after the request went).
   */
  notSent?: boolean;
  /**
   * A trigger whose answer was lost and could not be recovered in time (issue 36 item 2): the runtime may have
   * started the run. The run is then left `queued` for recovery to find by its tag, never failed while it may run.
   */
  maybeStarted?: boolean;
}

export type Outcome<T> = { ok: true; value: T } | { ok: false; failure: RuntimeFailure };

/** The terminal (or not) answer of a workflow runtime's held webhook call. */
export interface WorkflowAnswer {
  status: 'completed' | 'failed' | 'cancelled';
  output: unknown; // parsed JSON body on success; null otherwise
  error: string | null; // short reason on failure
  externalRunId: string | null; // x-n8n-execution-id when the workflow sends it
  /** The runtime's HTTP status when it answered at all; undefined after a transport error or an abort. */
  httpStatus?: number;
  /** True when the caller's signal ended the held call (the wait window or a cancel), not the runtime. */
  aborted?: boolean;
}

export interface InvokeArgs {
  runtime: RuntimeConnection;
  target: string; // n8n webhook path or Trigger.dev task identifier
  payload: TaskPayload;
  /**
   * The only deadline of a workflow runtime's held call (the wait window, the running timeout or a cancel);
   * adapters add no short timer of their own. For invokeStream it bounds only the wait for the answer to begin:
   * once it has begun, stop a download by destroying `body`. Task runtimes' API calls have their own short bounds.
   */
  signal?: AbortSignal;
}

export interface Invoked {
  externalRunId: string | null;
  /**
   * Workflow runtimes only: settles when the held webhook call answers (never rejects; a transport error, an
   * empty 200 or a 5xx resolve as `failed`). Task runtimes leave it undefined: their result is polled.
   */
  answer?: Promise<WorkflowAnswer>;
}

/** A runtime's streamed bytes, not buffered (n8n: upstream-stream.ts, whose `pipe` writes straight into the response). */
export interface StreamBody extends Readable {
  /** Bytes received from the runtime so far. */
  readonly received: number;
}

export interface StreamStart {
  status: number;
  headers: Record<string, string>; // lowercased names
  body: StreamBody;
  /**
   * True when the runtime answered JSON (content-type) or announced an empty body (`content-length: 0`) instead
   * of a file: spec 4.3's 502 case. A chunked body with no content-type that turns out empty is not detected
   * here; the route sees zero bytes.
   */
  isJson: boolean;
  /** n8n: the `x-n8n-execution-id` header when the Respond node sets it. */
  externalRunId?: string | null;
}

export interface RemoteStatus {
  status: MappedStatus | 'unknown';
  output: unknown; // the task's return value / workflow output, only when completed
  error: string | null;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** Wall clock finishedAt - startedAt when both are known (never Trigger.dev's compute-only durationMs). */
  durationMs?: number | null;
  /** The runtime's own status word, for logs and diagnostics. */
  runtimeStatus?: string;
  /**
   * What the run ran at the runtime (runs/run-ownership.ts decides whether that is the agent's target); null when
   * the runtime's answer did not say.
   */
  owner: RemoteOwner | null;
}

/**
 * Whose run it is at the runtime: Trigger.dev's `taskIdentifier`, or the n8n workflow an execution ran with the
 * paths its Webhook nodes answer POST on (from the execution's own copy of the graph, slashes trimmed).
 */
export type RemoteOwner = { taskIdentifier: string } | { workflowId: string; webhookPaths: string[] };

/** One line of `fetchLogs`: a Trigger.dev run event or an n8n node run, normalised. */
export interface RuntimeLogEntry {
  time: string | null; // ISO 8601
  level: string;
  message: string;
  isError: boolean;
  durationMs: number | null;
  /** n8n: the node name. */
  node?: string;
}

/** What names a run this deployment started, at its runtime (what the payload carried). */
export interface RunMarker {
  runId: number;
  deploymentId: string;
  /** When the run was created here: the runtime's record cannot be older (bounds the search). */
  createdAt: Date;
}

/** The runtime's record of a run found by its marker. */
export interface FoundRun {
  externalRunId: string;
  remote: RemoteStatus;
}

export interface WaitpointState {
  status: 'WAITING' | 'COMPLETED' | 'TIMED_OUT' | 'UNKNOWN';
  /**
   * Which run the token resumes, as far as the runtime says (runs/waitpoint-ownership.ts checks it against the
   * run): n8n, the execution of the resume URL and, when read, the workflow it runs; Trigger.dev, the run tags
   * (`ars_run:…`) the task put on the token. Absent when the runtime says nothing.
   */
  resumes?: { externalRunId?: string; owner?: RemoteOwner | null; runTags?: string[] };
}

export interface RuntimeAdapter {
  readonly kind: RuntimeKind;
  /** Spec 4.7: only runtimes that answer a held call can serve webhook-and-wait. */
  readonly supportsSyncInvoke: boolean;
  /** Spec 4.8 `waiting`: only runtimes that implement waitpoints. */
  readonly supportsWaitpoints: boolean;

  /** Starts a run. Resolves once the runtime accepted the request (or failed to). */
  invoke(args: InvokeArgs): Promise<Outcome<Invoked>>;
  /** Starts a run whose answer is a file, resolving when the runtime begins to answer. */
  invokeStream(args: InvokeArgs): Promise<Outcome<StreamStart>>;
  fetchStatus(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<RemoteStatus>>;
  cancel(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<void>>;
  /**
   * Finds the runtime's record of a run whose start this service lost track of (a crash, a restart, a write that
   * failed), by what the payload carried. null: the runtime shows no such run.
   */
  findRun(runtime: RuntimeConnection, target: string, marker: RunMarker): Promise<Outcome<FoundRun | null>>;
  /** Where the runtime needs an inspection first (Trigger.dev answers success even for finished tokens). */
  inspectWaitpoint(runtime: RuntimeConnection, tokenId: string): Promise<Outcome<WaitpointState>>;
  completeWaitpoint(runtime: RuntimeConnection, tokenId: string, payload: unknown): Promise<Outcome<void>>;
  fetchLogs(runtime: RuntimeConnection, externalRunId: string): Promise<Outcome<RuntimeLogEntry[]>>;
}
