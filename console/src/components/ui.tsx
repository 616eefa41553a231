// Small shared pieces: load states, times, copy buttons, confirmations, collapsible JSON.
import { cloneElement, useId, useState, type ReactElement, type ReactNode } from 'react';
import type { Load } from '../lib/useLoad.ts';
import { localTime, pretty } from '../lib/format.ts';

/** Loading, error (with Retry) and empty states around a loaded value; children render the data. */
export function Loaded<T>({ load, empty, isEmpty, children }: { load: Load<T>; empty?: string; isEmpty?: (d: T) => boolean; children: (d: T) => ReactNode }) {
  if (load.state === 'error' && load.data === undefined) {
    return (
      <div className="notice error" role="alert">
        <p>Could not load: {load.error.message}</p>
        <button type="button" onClick={load.reload}>Retry</button>
      </div>
    );
  }
  if (load.data === undefined) return <p className="muted" role="status">Loading…</p>;
  return (
    <>
      {load.state === 'error' && <p className="notice error" role="alert">Refresh failed: {load.error.message}</p>}
      {isEmpty?.(load.data) ? <p className="muted empty">{empty ?? 'Nothing here yet.'}</p> : children(load.data)}
    </>
  );
}

export function Time({ iso }: { iso: string | null | undefined }) {
  if (!iso) return <span className="muted">—</span>;
  return <time dateTime={iso} title={iso}>{localTime(iso)}</time>;
}

export function CopyButton({ text, label = 'Copy' }: { text: string; label?: string }) {
  const [done, setDone] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(text);
    setDone(true);
    setTimeout(() => setDone(false), 1500);
  };
  return (
    <button type="button" onClick={() => void copy()} aria-label={label}>
      {done ? 'Copied' : label}
    </button>
  );
}

/** A value shown once or on request (keys, tokens, webhook URLs), with a Copy button. */
export function Secret({ value, label }: { value: string; label: string }) {
  return (
    <span className="secret">
      <code aria-label={label}>{value}</code> <CopyButton text={value} />
    </span>
  );
}

/** A dangerous action behind a second click: `label` asks, `confirm` does it. */
export function ConfirmButton({ label, confirm, onConfirm, disabled }: { label: string; confirm: string; onConfirm: () => void; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  if (!asking) return <button type="button" className="danger" disabled={disabled} onClick={() => setAsking(true)}>{label}</button>;
  return (
    <span className="confirm" role="group" aria-label={`${label}?`}>
      <button type="button" className="danger" autoFocus onClick={() => (setAsking(false), onConfirm())}>{confirm}</button>
      <button type="button" onClick={() => setAsking(false)}>Keep</button>
    </span>
  );
}

/** JSON, folded when long, always copyable. */
export function Json({ value, label }: { value: unknown; label: string }) {
  const text = pretty(value);
  const long = text.length > 400 || text.split('\n').length > 12;
  const body = <pre className="json" tabIndex={0} aria-label={label}>{text}</pre>;
  return (
    <div className="json-block">
      <div className="json-tools"><CopyButton text={text} label={`Copy ${label}`} /></div>
      {long ? (
        <details>
          <summary>{label} ({text.length.toLocaleString()} characters)</summary>
          {body}
        </details>
      ) : body}
    </div>
  );
}

export function StatusBadge({ status }: { status: string }) {
  return <span className={`badge status-${status}`}>{status}</span>;
}

/** Runs an action, reporting its error next to the control instead of losing it. */
export function useAction(): { busy: boolean; error: string | null; run: (fn: () => Promise<unknown>) => Promise<boolean> } {
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const run = async (fn: () => Promise<unknown>) => {
    setBusy(true);
    setError(null);
    try {
      await fn();
      return true;
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      return false;
    } finally {
      setBusy(false);
    }
  };
  return { busy, error, run };
}

export function ErrorLine({ error }: { error: string | null }) {
  return error ? <p className="field-error" role="alert">{error}</p> : null;
}

/**
 * A labelled control. The label points at the control (htmlFor) instead of wrapping it, so the control's
 * accessible name is the label alone (a wrapping label would add a select's option texts to it).
 */
export function Field({ label, children, className }: { label: string; children: ReactElement<{ id?: string }>; className?: string }) {
  const id = useId();
  return (
    <div className={className ? `field ${className}` : 'field'}>
      <label htmlFor={id}>{label}</label>
      {cloneElement(children, { id })}
    </div>
  );
}
