// Shapes and names shared by the orchestrator and its child processes.

/** The Trigger.dev task and n8n webhook paths the seeded agents target. */
export const TASK = 'bench-task';
export const ECHO_PATH = 'bench-echo';
export const DOWNLOAD_PATH = 'bench-download';

/** One HTTP request the load generator can send. */
export interface ReqSpec {
  method: 'GET' | 'POST';
  path: string;
  headers: Record<string, string>;
  body?: string;
}

export interface ThroughputJob {
  origin: string;
  /** Sent round-robin, one global counter across all connections. */
  requests: ReqSpec[];
  connections: number;
  warmupMs: number;
  durationMs: number;
  /** Go on past durationMs (up to a minute more) until this many requests were sent: a pass over the whole list. */
  atLeast?: number;
}

export interface LatencySummary {
  n: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

/** One wake job: each held request answered after its wake request, timed from the wake sent to the answer read. */
export interface WakeResult {
  latency: LatencySummary;
  /** Every measured latency (ms), so several rounds can be merged before taking percentiles. */
  samples: Float64Array;
  /** When each sample's wake request was sent (ms since the epoch, the machine's clock), index for index. */
  starts: Float64Array;
  /** The garbage-collection pauses of the service hosts involved while the round woke its waits (sync-wait.ts). */
  gc?: GcPause[];
  woken: number;
  /** Answered before their wake request was sent (a poll or a timeout got there first): not wake-ups. */
  early: number;
  /** Not answered within 10 s of their wake request. */
  late: number;
  failures: Record<string, number>;
}

export interface ThroughputResult {
  requests: number;
  rps: number;
  latency: LatencySummary;
  /** Status code (or 'error') → count, measured window only. */
  statuses: Record<string, number>;
  /** The load generator's CPU use during the window, in cores (1 = one core saturated). */
  clientCpu: number;
  /** Every measured latency (ms), so several windows can be merged before taking percentiles. */
  samples: Float64Array;
}

/** What the service host measured about itself over one window. */
export interface HostProfile {
  wallMs: number;
  cpuMs: number;
  /** Event loop utilisation 0..1. */
  elu: number;
  queries: Array<{ sql: string; count: number; totalMs: number }>;
  invokes: { count: number; totalMs: number };
}

/** One V8 garbage-collection pause in a service host (PerformanceObserver 'gc'), on the machine's clock. */
export interface GcPause {
  /** Start, in ms since the epoch. */
  at: number;
  ms: number;
  /** A scavenge of the young generation, or a full (mark-compact) collection's pause. */
  kind: 'scavenge' | 'full';
}

export interface MemorySample {
  rss: number;
  heapUsed: number;
  external: number;
  arrayBuffers: number;
  /** Taken after forced full collections (the host was started with --expose-gc). */
  collected: boolean;
}

export interface AgentKeys {
  id: number;
  ingestKey: string;
  agentKey: string;
}

export interface Seeded {
  /** Trigger.dev agents: /trigger, held waits. */
  task: AgentKeys[];
  /** Trigger.dev agents whose runs report progress: /callback (SEED.progress in harness.ts says how many and why). */
  progress: AgentKeys[];
  /** Trigger.dev agents reserved for the callback-to-wake runs. */
  wake: AgentKeys[];
  /** n8n agents answering at once (trigger-and-wait latency). */
  workflow: AgentKeys[];
  /** n8n agents with output_kind file_download. */
  download: AgentKeys[];
  /** One Trigger.dev agent hammered past its limit. */
  hammer: AgentKeys;
}

export interface FakeUrls {
  trigger: string;
  triggerSecret: string;
  n8n: string;
  n8nApiKey: string;
}

/** A wake-up test item: the held request's key and the request that should end it. */
export interface WakeItem {
  key: string;
  wake: ReqSpec;
  /** Ask the orchestrator to prepare this run (complete it in the fake) before the wake request is sent. */
  prepare?: boolean;
}
