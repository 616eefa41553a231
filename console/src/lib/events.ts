// Live run updates: the service's server-sent events (GET /api/admin/runs/events, event `run`). When the stream does
// not exist on this service (404) or the browser gives up, the pages simply stay as loaded: a "Refresh" button is
// always there.
import { useEffect, useRef } from 'react';
import type { RunStatus } from '../api/client.ts';

/** The `data` of an `event: run` (docs/api.md "Live runs"); OpenAPI describes the stream only as text. */
export interface RunEvent {
  runId: number;
  agentId: number;
  orgId: string;
  status: RunStatus;
  updated_at: string;
}

const RUN_EVENTS_URL = '/api/admin/runs/events';
/** A busy service changes many runs a second; a page reloads at most this often. */
const RELOAD_EVERY_MS = 1000;

/**
 * Calls `reload` when a run the page cares about (`matches`) changes, or when the service says the stream missed
 * too much to replay (`event: refetch`), at most once a second.
 */
export function useRunEvents(matches: (e: RunEvent) => boolean, reload: () => void): void {
  const latest = useRef({ matches, reload });
  latest.current = { matches, reload };
  useEffect(() => {
    if (typeof EventSource === 'undefined') return;
    const source = new EventSource(RUN_EVENTS_URL, { withCredentials: true });
    let opened = false;
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
    source.onopen = () => void (opened = true);
    source.addEventListener('run', (msg) => {
      try {
        if (latest.current.matches(JSON.parse((msg as MessageEvent<string>).data) as RunEvent)) schedule();
      } catch {
        // A malformed event is skipped; the next one or a refresh brings the page up to date.
      }
    });
    source.addEventListener('refetch', schedule);
    // The service ended the stream: the session or membership behind it is gone (a reconnect would be refused).
    source.addEventListener('end', () => source.close());
    // Never opened: the route is missing or refused; retrying every few seconds would only add noise.
    source.onerror = () => void (!opened && source.close());
    return () => {
      clearTimeout(timer);
      source.close();
    };
  }, []);
}
