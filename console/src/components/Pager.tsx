// One paging mechanism for every list (issue 40 item 1): the page's cursor is in the query string (so a page is a
// link), the cursors of the pages before it in the component's state (for "Previous page"); the service's
// `next_cursor` says whether there is a next one.
import { useState } from 'react';
import { setQuery, useLocation } from '../lib/router.tsx';

/** The list's current cursor, and the pager's state; `reset` goes back to the first page (a filter changed). */
export function usePager(): { cursor: string | undefined; back: string[]; setBack: (b: string[]) => void } {
  const { query } = useLocation();
  const [back, setBack] = useState<string[]>([]);
  return { cursor: query.get('cursor') ?? undefined, back, setBack };
}

export function Pager({ pager, next }: { pager: ReturnType<typeof usePager>; next: string | null }) {
  const { query } = useLocation();
  const values = Object.fromEntries([...query.entries()]);
  const { cursor, back, setBack } = pager;
  if (!cursor && !next) return null;
  return (
    <nav className="pager" aria-label="Pages">
      {cursor && (
        <button type="button" onClick={() => {
          setQuery({ ...values, cursor: back[back.length - 1] || undefined });
          setBack(back.slice(0, -1));
        }}>Previous page</button>
      )}
      {next && (
        <button type="button" onClick={() => {
          setBack([...back, cursor ?? '']);
          setQuery({ ...values, cursor: next });
        }}>Next page</button>
      )}
    </nav>
  );
}
