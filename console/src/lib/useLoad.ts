// Loading state for one request: every page shows loading, error and empty states from this one shape.
import { useCallback, useEffect, useRef, useState } from 'react';

export type Load<T> =
  | { state: 'loading'; data?: T; error?: undefined; reload: () => void }
  | { state: 'ok'; data: T; error?: undefined; reload: () => void }
  | { state: 'error'; data?: T; error: Error; reload: () => void };

/** Runs `fn` now and whenever `deps` change; reload() runs it again keeping the old data on screen meanwhile. */
export function useLoad<T>(fn: () => Promise<T>, deps: readonly unknown[]): Load<T> {
  const [result, setResult] = useState<{ state: 'loading' | 'ok' | 'error'; data?: T; error?: Error }>({ state: 'loading' });
  const [tick, setTick] = useState(0);
  const latest = useRef(0);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  useEffect(() => {
    const mine = ++latest.current;
    setResult((r) => ({ ...r, state: r.data === undefined ? 'loading' : r.state }));
    fn().then(
      (data) => mine === latest.current && setResult({ state: 'ok', data }),
      (error: unknown) => mine === latest.current && setResult((r) => ({ state: 'error', data: r.data, error: error instanceof Error ? error : new Error(String(error)) })),
    );
    // The caller names what the request depends on (deps); fn itself is a new closure each render.
  }, [...deps, tick]);
  return { ...result, reload } as Load<T>;
}
