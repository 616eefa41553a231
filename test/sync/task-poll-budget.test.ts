// decisions.md "Synchronous endpoints": while callers wait on task runs, the instance reads run status from the
// runtime at most ~SYNC_POLL_BUDGET_PER_SECOND times a second in total, however many waits it holds; a lone wait
// still polls at the short first delays. (Scheduling only: the adapter here answers every read with a failure,
// which the poll simply retries, so no database is involved.)
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { PollBudget, pollTaskWhileWaiting, SYNC_POLL_BUDGET_PER_SECOND } from '../../src/sync/task-wait.ts';
import type { AppContext } from '../../src/context.ts';
import type { RuntimeAdapter, RuntimeConnection } from '../../src/runtimes/runtime-adapter.ts';

let reads = 0;
const adapter = {
  fetchStatus: async () => {
    reads++;
    return { ok: false as const, failure: { kind: 'unreachable' as const, message: 'not yet', retryable: true } };
  },
} as unknown as RuntimeAdapter;
const runtime = { id: 1, kind: 'task' } as RuntimeConnection;
const ctx = { log: { warn: () => {} }, pollBudget: new PollBudget() } as unknown as AppContext;

function startPolls(n: number): AbortController[] {
  return Array.from({ length: n }, (_, i) => {
    const stop = new AbortController();
    const run = { id: i + 1, status: 'queued' as const, started_at: null, created_at: new Date(), external_run_id: `run_${i}` };
    pollTaskWhileWaiting(ctx, { run, target: 'my-task', runningTimeoutMs: 60_000, runtime, adapter }, stop.signal);
    return stop;
  });
}

beforeEach(() => {
  reads = 0;
  vi.useFakeTimers();
});
afterEach(() => vi.useRealTimers());

describe('status reads while callers wait on task runs', () => {
  it('5,000 waits together stay within the budget (without it they would read ~25,000 times in 30 s)', async () => {
    const stops = startPolls(5_000);
    await vi.advanceTimersByTimeAsync(30_000);
    expect(reads).toBeGreaterThan(0);
    expect(reads).toBeLessThanOrEqual(SYNC_POLL_BUDGET_PER_SECOND * 30 * 1.5);
    for (const s of stops) s.abort();

    // Every ended wait gave its share back: a lone wait polls at the short first delay again.
    reads = 0;
    const [lone] = startPolls(1);
    await vi.advanceTimersByTimeAsync(700);
    expect(reads).toBe(1);
    lone!.abort();
  }, 120_000); // 5,000 fake-timer loops are CPU work: on a loaded 2-core machine they outlast the default 30 s
});
