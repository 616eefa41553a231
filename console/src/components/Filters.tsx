// A list's filters (issue 40 item 3): open on a desk; folded under "Filters" on a phone, where seven fields came
// before the first run. The summary says how many are set, so a folded filter is never a surprise.
import { useState, type ReactNode } from 'react';

const NARROW = '(max-width: 700px)';

export function Filters({ label, active, children }: { label: string; active: number; children: ReactNode }) {
  const [open] = useState(() => typeof window === 'undefined' || !window.matchMedia(NARROW).matches);
  return (
    <details className="filter-box" open={open}>
      <summary>Filters{active > 0 ? ` (${active} set)` : ''}</summary>
      <form className="filters" aria-label={label} onSubmit={(e) => e.preventDefault()}>{children}</form>
    </details>
  );
}
