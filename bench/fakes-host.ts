// Child process: the runtime fakes from test/fakes, on their own CPU budget so they do not steal time from the
// service under test. Served to the orchestrator over IPC.
//
// The fakes keep every request and run they ever saw, and the Trigger.dev fake looks idempotency keys up by
// scanning its runs. Under 100k requests that would turn the fake into the bottleneck, so while a throughput
// phase runs the records are pruned every 250 ms (both the service and its baseline pay the same, small, scan).
import { serveParent } from './ipc.ts';
import { randomBytes } from 'node:crypto';
import { TriggerDevFake, type FakeTriggerRun } from '../test/fakes/trigger-dev-fake.ts';
import { N8nFake } from '../test/fakes/n8n-fake.ts';
import { DOWNLOAD_PATH, ECHO_PATH, TASK, type FakeUrls } from './types.ts';

const trigger = new TriggerDevFake();
const n8n = new N8nFake();
/**
 * Platform run id → Trigger.dev run id. Keyed on the payload's `runId`, the id the task itself calls back with,
 * not on the trigger's idempotency key: that is `{deploymentId}:{runId}` since recovery (9ee40a8), and a map keyed
 * on it found no run, so completeTask completed nothing and every held wait waited for a return value that never
 * came (callback-to-wake: hundreds of held calls answered 202 at their window's end).
 */
const byPlatformRun = new Map<string, string>();
let pruneTimer: NodeJS.Timeout | null = null;
let triggers = 0;

function prune(): void {
  trigger.runs.clear();
  trigger.requests.length = 0;
  n8n.executions.clear();
  n8n.requests.length = 0;
  byPlatformRun.clear();
}

serveParent({
  async init(): Promise<FakeUrls> {
    await trigger.start();
    await n8n.start();
    trigger.registerTask(TASK, (run) => {
      triggers++;
      const platformRunId = (run.payload as { runId?: unknown } | undefined)?.runId;
      if (typeof platformRunId === 'number') byPlatformRun.set(String(platformRunId), run.id);
    });
    // An n8n workflow whose Respond node answers at once, as the trigger-and-wait latency figure asks.
    n8n.registerWorkflow(ECHO_PATH, { json: { ok: true, outputs: 1 }, executionIdHeader: true });
    return { trigger: trigger.url, triggerSecret: trigger.secretKey, n8n: n8n.url, n8nApiKey: n8n.apiKey };
  },

  /** The file the download workflow answers from now on: generated on the fly, never held in memory. */
  setDownloadSize(size: number): void {
    n8n.registerWorkflow(DOWNLOAD_PATH, {
      binary: { contentType: 'application/octet-stream', size, inMemory: true },
      headers: { 'content-disposition': 'attachment; filename="bench.bin"' },
      executionIdHeader: true,
    });
  },

  autoPrune(on: boolean): void {
    if (pruneTimer) clearInterval(pruneTimer);
    pruneTimer = on ? setInterval(prune, 250) : null;
    if (on) prune();
  },

  reset(): void {
    prune();
    triggers = 0;
  },

  /** Triggers since the last reset, and status reads (GET /api/v3/runs/{id}) among the requests still recorded. */
  stats(): { triggers: number; statusReads: number; n8nCalls: number } {
    return { triggers, statusReads: trigger.requestsTo(/^\/api\/v3\/runs\//, 'GET').length, n8nCalls: n8n.executions.size };
  },

  /** What the task does before it calls back `complete: true`: its return value becomes final in Trigger.dev. */
  completeTask(args: { platformRunId: number; output: unknown }): boolean {
    const id = byPlatformRun.get(String(args.platformRunId));
    if (!id || !trigger.runs.has(id)) return false;
    trigger.completeRun(id, args.output);
    return true;
  },

  /**
   * Runs of the bench task that already exist at Trigger.dev (the scale scenario's due polls): every `completeEvery`th
   * COMPLETED with the given output, the rest still EXECUTING. Returns their ids, to be the runs' external_run_id.
   */
  createTaskRuns(args: { count: number; completeEvery: number; output: unknown }): string[] {
    const ids: string[] = [];
    const startedAt = new Date(Date.now() - 60_000);
    for (let i = 0; i < args.count; i++) {
      const done = i % args.completeEvery === 0;
      const run: FakeTriggerRun = {
        id: `run_${randomBytes(10).toString('hex')}`, taskIdentifier: TASK, payload: {}, options: {}, tags: [],
        status: done ? 'COMPLETED' : 'EXECUTING', createdAt: startedAt, startedAt, durationMs: 1000, costInCents: 0, events: [], lagReadsLeft: 0,
        ...(done ? { output: args.output, finishedAt: new Date() } : {}),
      };
      trigger.runs.set(run.id, run);
      ids.push(run.id);
    }
    return ids;
  },

  async close(): Promise<void> {
    if (pruneTimer) clearInterval(pruneTimer);
    await trigger.stop();
    await n8n.stop();
  },
});
