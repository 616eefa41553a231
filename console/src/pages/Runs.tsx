// /runs (and /): the runs the user can see, newest first, filtered through the query string (so a filtered view
// is a link), paged by cursor, kept live by the run event stream.
import { api, RUN_STATUSES, unwrap, type Run } from '../api/client.ts';
import { agentName, useAgentLookup } from '../lib/agents.ts';
import { useRunEvents } from '../lib/events.ts';
import { duration } from '../lib/format.ts';
import { Link, setQuery, useLocation } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Field, Loaded, StatusBadge, Time } from '../components/ui.tsx';
import { AgentPicker } from '../components/AgentPicker.tsx';
import { Pager, usePager } from '../components/Pager.tsx';
import { Filters } from '../components/Filters.tsx';

// How a run started, as the run view's `source` names it.
const SOURCES = ['trigger', 'trigger_and_wait', 'download', 'webhook', 'webhook_and_wait', 'register', 'ingest', 'zone', 'zone_wait', 'zone_download', 'replay', 'console'];
// The filters beyond agent and status (GET /api/admin/runs query parameters).
const EXTRA = [
  { name: 'source', label: 'Source', options: SOURCES },
  { name: 'from', label: 'From', type: 'datetime-local' },
  { name: 'to', label: 'To', type: 'datetime-local' },
  { name: 'external_run_id', label: 'External run id' },
  { name: 'created_by', label: 'Creator (user id)' },
] as const;

export function Runs() {
  const { query } = useLocation();
  const pager = usePager();
  const { cursor } = pager;
  const values: Record<string, string | undefined> = Object.fromEntries([...query.entries()]);
  const key = query.toString();

  const page = useLoad(() => {
    const at = (v: string | null) => (v ? new Date(v).toISOString() : undefined); // datetime-local is the viewer's zone
    const status = RUN_STATUSES.find((s) => s === query.get('status'));
    const get = (k: string) => query.get(k) || undefined;
    return unwrap(api.GET('/api/admin/runs', {
      params: {
        query: {
          agent_id: get('agent_id'), status, source: get('source'), created_from: at(query.get('from')), created_to: at(query.get('to')),
          external_run_id: get('external_run_id'), created_by: get('created_by'), cursor: get('cursor'),
        },
      },
    }));
  }, [key]);

  // A run changed: refetch when it is on this page, or when the first page could gain a new run.
  useRunEvents((e) => !cursor || !!page.data?.data.some((r) => r.runId === e.runId), page.reload);

  const set = (name: string, value: string) => {
    pager.setBack([]);
    setQuery({ ...values, cursor: undefined, [name]: value || undefined });
  };

  return (
    <section aria-labelledby="runs-title">
      <div className="title-row">
        <h1 id="runs-title">Runs</h1>
        <button type="button" onClick={page.reload}>Refresh</button>
      </div>
      <Filters label="Filter runs" active={Object.entries(values).filter(([k]) => k !== 'cursor').map(([, v]) => v).filter(Boolean).length}>
        <AgentPicker value={values.agent_id ?? ''} onChange={(v) => set('agent_id', v)} />
        <Field label="Status">
          <select value={values.status ?? ''} onChange={(e) => set('status', e.target.value)}>
            <option value="">Any status</option>
            {RUN_STATUSES.map((s) => <option key={s}>{s}</option>)}
          </select>
        </Field>
        {EXTRA.map((f) => (
          <Field key={f.name} label={f.label}>
            {'options' in f ? (
              <select value={values[f.name] ?? ''} onChange={(e) => set(f.name, e.target.value)}>
                <option value="">Any</option>
                {f.options.map((o) => <option key={o}>{o}</option>)}
              </select>
            ) : (
              <input type={'type' in f ? f.type : 'text'} defaultValue={values[f.name] ?? ''} onBlur={(e) => set(f.name, e.target.value)}
                onKeyDown={(e) => e.key === 'Enter' && set(f.name, e.currentTarget.value)} />
            )}
          </Field>
        ))}
      </Filters>
      <Loaded load={page} isEmpty={(p) => p.data.length === 0} empty="No runs match these filters.">
        {(p) => (
          <>
            <RunTable runs={p.data} />
            <Pager pager={pager} next={p.next_cursor} />
          </>
        )}
      </Loaded>
    </section>
  );
}

export function RunTable({ runs }: { runs: Run[] }) {
  const lookup = useAgentLookup(runs.map((r) => r.agentId));
  const agentOf = (id: number) => agentName(lookup, id);
  return (
    <div className="table-wrap">
      <table>
        <caption className="sr-only">Runs, newest first</caption>
        <thead>
          <tr><th scope="col">Run</th><th scope="col">Agent</th><th scope="col">Status</th><th scope="col">Source</th><th scope="col">Created</th><th scope="col">Duration</th><th scope="col">External id</th></tr>
        </thead>
        <tbody>
          {runs.map((r) => (
            <tr key={r.runId}>
              <td><Link to={`/runs/${r.runId}`}>#{r.runId}</Link></td>
              <td>{agentOf(r.agentId)}</td>
              <td><StatusBadge status={r.status} /></td>
              <td>{r.source}</td>
              <td><Time iso={r.created_at} /></td>
              <td>{duration(r.duration_ms)}</td>
              <td className="mono">{r.external_run_id ?? '—'}</td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
