// Loading state for one request: every page shows loading, error and empty states from this one shape.
import { useCallback, useEffect, useRef, useState } from 'react';

export type Load<T> =
  | { state: 'loading'; data?: T; error?: undefined; reload: () => void }
  | { state: 'ok'; data: T; error?: undefined; reload: () => void }
  | { state: 'error'; data?: T; error: Error; reload: () => void };

interface Settled<T> {
  /** The request (deps and reload count) this answer is for. */
  for: readonly unknown[];
  state: 'ok' | 'error';
  data?: T;
  error?: Error;
}

const same = (a: readonly unknown[], b: readonly unknown[]) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

/**
 * Runs `fn` now and whenever `deps` change; reload() runs it again keeping the old data on screen meanwhile. The
 * answer remembers which request it is for, so a newer request shows as loading (over the old data, if any) without
 * an extra render to say so.
 */
export function useLoad<T>(fn: () => Promise<T>, deps: readonly unknown[]): Load<T> {
  const [settled, setSettled] = useState<Settled<T> | null>(null);
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  const request = [...deps, tick];
  useEffect(() => {
    const mine = ++latest.current;
    fn().then(
      (data) => mine === latest.current && setSettled({ for: request, state: 'ok', data }),
      (error: unknown) => mine === latest.current && setSettled((s) => ({ for: request, state: 'error', data: s?.data, error: error instanceof Error ? error : new Error(String(error)) })),
    );
    // The caller names what the request depends on (deps, as useMemo's); fn itself is a new closure each render.
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, request);
  if (settled === null) return { state: 'loading', reload };
  if (same(settled.for, request) || settled.data !== undefined) {
    // Current, or an older answer with data kept on screen while the new one loads (as before: no flash of "Loading").
    return { ...settled, reload } as Load<T>;
  }
  return { state: 'loading', reload };
}
