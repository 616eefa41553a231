// Live run updates: the service's server-sent events (GET /api/admin/runs/events, event `run`), one stream for the
// whole console (issue 40 item 6: every page opened its own), started when the user signs in and stopped when they
// sign out. Pages subscribe with useRunEvents; the header shows the connection's state (useConnection): live,
// reconnecting, or offline after OFFLINE_AFTER_MS without a connection — then a banner says the service cannot be
// reached (issue 40 item 5: an outage showed nothing until the user acted, then "Failed to fetch"). When the stream
// comes back, every subscribed page reloads: it may have missed changes meanwhile.
import { useEffect, useRef, useSyncExternalStore } from 'react';
import type { RunStatus } from '../api/client.ts';

/** The `data` of an `event: run` (docs/api.md "Live runs"); OpenAPI describes the stream only as text. */
export interface RunEvent {
  runId: number;
  agentId: number;
  orgId: string;
  status: RunStatus;
  updated_at: string;
}

/**
 * `connecting`: not yet open. `live`: open. `reconnecting`: lost, the browser retrying. `offline`: lost for
 * OFFLINE_AFTER_MS (still retrying). `unavailable`: this service has no stream for the user (refused, or ended by
 * the service because the session or membership behind it is gone); pages stay as loaded, with their Refresh.
 */
export type Connection = 'connecting' | 'live' | 'reconnecting' | 'offline' | 'unavailable';

const RUN_EVENTS_URL = '/api/admin/runs/events';
/** How long a lost stream is "reconnecting" before the console says the service cannot be reached. */
const OFFLINE_AFTER_MS = 8_000;
/** After the browser gave up on a lost stream, we open a new one this long after. */
const RETRY_CLOSED_MS = 5_000;
/** A busy service changes many runs a second; a page reloads at most this often. */
const RELOAD_EVERY_MS = 1000;

type Listener = { onRun: (e: RunEvent) => void; onMissed: () => void };

/** The one stream of this browser tab. */
class RunStream {
  #source: EventSource | null = null;
  #state: Connection = 'connecting';
  #everOpened = false;
  #offlineTimer: ReturnType<typeof setTimeout> | undefined;
  #retryTimer: ReturnType<typeof setTimeout> | undefined;
  readonly #listeners = new Set<Listener>();
  readonly #watchers = new Set<() => void>();

  get state(): Connection {
    return this.#state;
  }

  start(): void {
    if (this.#source || typeof EventSource === 'undefined') return;
    this.#everOpened = false;
    this.#set('connecting');
    this.#open();
  }

  #open(): void {
    const source = new EventSource(RUN_EVENTS_URL, { withCredentials: true });
    this.#source = source;
    source.onopen = () => {
      clearTimeout(this.#offlineTimer);
      this.#offlineTimer = undefined;
      const wasLost = this.#state === 'reconnecting' || this.#state === 'offline';
      this.#everOpened = true;
      this.#set('live');
      if (wasLost) for (const l of this.#listeners) l.onMissed();
    };
    source.addEventListener('run', (msg) => {
      let event: RunEvent;
      try {
        event = JSON.parse((msg as MessageEvent<string>).data) as RunEvent;
      } catch {
        return; // a malformed event is skipped; the next one or a refresh brings the page up to date
      }
      for (const l of this.#listeners) l.onRun(event);
    });
    source.addEventListener('refetch', () => {
      for (const l of this.#listeners) l.onMissed();
    });
    // The service ended the stream: the session or membership behind it is gone (a reconnect would be refused).
    source.addEventListener('end', () => this.#giveUp());
    source.onerror = () => {
      // Never opened: the route is missing or refused; retrying every few seconds would only add noise.
      if (!this.#everOpened) return this.#giveUp();
      if (source.readyState === EventSource.CLOSED) {
        // The browser stopped retrying (an error answer, e.g. a proxy's 502 while the service restarts): we retry.
        source.close();
        this.#source = null;
        clearTimeout(this.#offlineTimer);
        this.#set('offline');
        this.#retryTimer = setTimeout(() => this.#open(), RETRY_CLOSED_MS);
        return;
      }
      if (this.#state === 'live') {
        this.#set('reconnecting');
        this.#offlineTimer = setTimeout(() => this.#state === 'reconnecting' && this.#set('offline'), OFFLINE_AFTER_MS);
      }
    };
  }

  stop(): void {
    clearTimeout(this.#offlineTimer);
    clearTimeout(this.#retryTimer);
    this.#source?.close();
    this.#source = null;
    this.#set('connecting');
  }

  subscribe(l: Listener): () => void {
    this.#listeners.add(l);
    return () => void this.#listeners.delete(l);
  }

  watch = (w: () => void): (() => void) => {
    this.#watchers.add(w);
    return () => void this.#watchers.delete(w);
  };

  #giveUp(): void {
    clearTimeout(this.#offlineTimer);
    this.#source?.close();
    this.#source = null;
    this.#set('unavailable');
  }

  #set(state: Connection): void {
    if (this.#state === state) return;
    this.#state = state;
    for (const w of this.#watchers) w();
  }
}

const stream = new RunStream();

/** Keeps the tab's stream open while `signedIn` (App). */
export function useRunStream(signedIn: boolean): void {
  useEffect(() => {
    if (!signedIn) return;
    stream.start();
    return () => stream.stop();
  }, [signedIn]);
}

/** The stream's state, re-rendering when it changes. */
export function useConnection(): Connection {
  return useSyncExternalStore(stream.watch, () => stream.state);
}

/**
 * Calls `reload` when a run the page cares about (`matches`) changes, when the service says the stream missed too
 * much to replay (`event: refetch`), or when the stream is back after a loss — at most once a second.
 */
export function useRunEvents(matches: (e: RunEvent) => boolean, reload: () => void): void {
  const latest = useRef({ matches, reload });
  latest.current = { matches, reload };
  useEffect(() => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let last = 0;
    const schedule = () => {
      if (timer) return;
      const wait = Math.max(0, last + RELOAD_EVERY_MS - Date.now());
      timer = setTimeout(() => {
        timer = undefined;
        last = Date.now();
        latest.current.reload();
      }, wait);
    };
    const unsubscribe = stream.subscribe({ onRun: (e) => latest.current.matches(e) && schedule(), onMissed: schedule });
    return () => {
      clearTimeout(timer);
      unsubscribe();
    };
  }, []);
}
