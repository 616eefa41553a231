// A router of a few lines on history.pushState and popstate (decisions.md "The console": no router library).
// Paths are matched in order by patterns such as '/runs/:id'; links are real <a href> so keyboard, middle-click
// and "open in new tab" work, and only plain left clicks are intercepted.
import { useSyncExternalStore, type AnchorHTMLAttributes, type MouseEvent } from 'react';

const listeners = new Set<() => void>();
const notify = () => listeners.forEach((l) => l());
window.addEventListener('popstate', notify);

function subscribe(listener: () => void) {
  listeners.add(listener);
  return () => void listeners.delete(listener);
}

export function navigate(to: string, opts: { replace?: boolean } = {}): void {
  if (to === location.pathname + location.search) return;
  if (opts.replace) history.replaceState(null, '', to);
  else history.pushState(null, '', to);
  notify();
  if (!opts.replace) window.scrollTo(0, 0);
}

/** The current path and query, re-rendering on every navigation. */
export function useLocation(): { path: string; query: URLSearchParams } {
  const href = useSyncExternalStore(subscribe, () => location.pathname + location.search);
  const url = new URL(href, location.origin);
  return { path: url.pathname, query: url.searchParams };
}

/** '/runs/:id' against '/runs/42' → { id: '42' }; null when it does not match. */
export function matchPath(pattern: string, path: string): Record<string, string> | null {
  const want = pattern.split('/');
  const got = path.replace(/\/+$/, '').split('/');
  if (want.length !== got.length && !(pattern === '/' && path === '/')) return null;
  const params: Record<string, string> = {};
  for (const [i, part] of want.entries()) {
    const seg = got[i] ?? '';
    if (part.startsWith(':')) {
      if (!seg) return null;
      params[part.slice(1)] = decodeURIComponent(seg);
    } else if (part !== seg) return null;
  }
  return params;
}

/** Replaces the query string (filters), keeping the path; empty values are dropped. */
export function setQuery(values: Record<string, string | undefined>): void {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(values)) if (v) q.set(k, v);
  const s = q.toString();
  navigate(location.pathname + (s ? `?${s}` : ''), { replace: true });
}

export function Link({ to, ...rest }: { to: string } & AnchorHTMLAttributes<HTMLAnchorElement>) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    rest.onClick?.(e);
    if (e.defaultPrevented || e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(to);
  };
  return <a href={to} {...rest} onClick={onClick} />;
}
