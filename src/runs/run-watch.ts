// Wakes synchronous waits when a run changes. A transition on this instance wakes local waiters at once; one on
// another instance arrives through the NOTIFY every status write sends in its own statement (run-announcements.ts),
// with the terminal row in it when it fits (then nobody reads it back). Waiters still re-check the database
// periodically, so a lost notification only adds latency.
import type { Db } from '../storage/db.ts';
import type { RunRow } from './runs-repo.ts';
import { parseRunNotification, rowFromNotification, RUN_EVENTS_CHANNEL } from './run-announcements.ts';
import type { RunStatus } from './run-states.ts';

/**
 * `run` is the row as just written, when the write happened on this instance or its notification carried it (no
 * need to read it back).
 */
type Listener = (status: RunStatus, run?: RunRow) => void;

export class RunWatch {
  private readonly listeners = new Map<number, Set<Listener>>();
  private readonly completing = new Map<number, Set<() => void>>();
  private readonly reconnected = new Set<() => void>();
  private stopListening: (() => Promise<void>) | null = null;

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    this.stopListening = await this.db.listen(
      RUN_EVENTS_CHANNEL,
      (payload) => {
        const n = parseRunNotification(payload);
        // The row is parsed only for a run someone here waits for.
        if (!this.listeners.has(n.runId)) return;
        const run = (n.rowJson !== null && rowFromNotification(n.rowJson)) || undefined;
        // Without its row, a waiter reads it: what it needs besides (a task's return value) can be read meanwhile.
        if (!run && n.status === 'completed') this.announceCompletion(n.runId);
        this.emit(n.runId, n.status, run);
      },
      () => {
        for (const listener of this.reconnected) listener();
      },
    );
  }

  /**
   * Hears that the LISTEN connection is back after it was lost (a database restart): whatever was announced
   * meanwhile never arrived, so watchers should look for themselves. Returns an unsubscribe function.
   */
  onReconnect(listener: () => void): () => void {
    this.reconnected.add(listener);
    return () => void this.reconnected.delete(listener);
  }

  async stop(): Promise<void> {
    await this.stopListening?.();
  }

  /** Only the status is known (a NOTIFY, a backstop re-check, a write that returned no row): listeners read it. */
  publish(runId: number, status: RunStatus): void {
    this.emit(runId, status, undefined);
  }

  /** Called after a write on this instance, with the row the write returned: listeners need not read it back. */
  publishRun(run: RunRow): void {
    this.emit(run.id, run.status, run);
  }

  /** Cheap when nobody waits for the run. */
  private emit(runId: number, status: RunStatus, run: RunRow | undefined): void {
    const set = this.listeners.get(runId);
    if (!set) return;
    for (const listener of set) listener(status, run);
  }

  /**
   * A completion of run `runId` is being written on this instance (its task said so), or was announced without
   * its row. Not a status: the write may still be refused. A wait uses it to start what it needs once the run is
   * terminal while the write commits or the row is read.
   */
  announceCompletion(runId: number): void {
    const set = this.completing.get(runId);
    if (set) for (const listener of set) listener();
  }

  /** Returns an unsubscribe function. */
  watch(runId: number, listener: Listener): () => void {
    return subscribe(this.listeners, runId, listener);
  }

  /** Hears announceCompletion() for run `runId`. Returns an unsubscribe function. */
  watchCompletion(runId: number, listener: () => void): () => void {
    return subscribe(this.completing, runId, listener);
  }

  get watchedRuns(): number {
    return this.listeners.size;
  }
}

function subscribe<L>(map: Map<number, Set<L>>, runId: number, listener: L): () => void {
  let set = map.get(runId);
  if (!set) map.set(runId, (set = new Set()));
  set.add(listener);
  let subscribed = true;
  // Idempotent: a second call must not drop a newer set for the same run from the map.
  return () => {
    if (!subscribed) return;
    subscribed = false;
    set.delete(listener);
    if (set.size === 0 && map.get(runId) === set) map.delete(runId);
  };
}
