// /audit: who did what, newest first, filtered by agent and action.
import { api, unwrap } from '../api/client.ts';
import { agentName, useAgentLookup } from '../lib/agents.ts';
import { Link, setQuery, useLocation } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Field, Json, Loaded, Time } from '../components/ui.tsx';
import { AgentPicker } from '../components/AgentPicker.tsx';
import { Pager, usePager } from '../components/Pager.tsx';
import { Filters } from '../components/Filters.tsx';

const PAGE = 50;

export function Audit() {
  const { query } = useLocation();
  const pager = usePager();
  const agent_id = query.get('agent_id') ?? '';
  const action = query.get('action') ?? '';
  const { cursor } = pager;
  const page = useLoad(
    () => unwrap(api.GET('/api/admin/audit', { params: { query: { ...(agent_id && { agent_id }), ...(action && { action }), ...(cursor && { cursor }), limit: String(PAGE) } } })),
    [agent_id, action, cursor],
  );
  const lookup = useAgentLookup((page.data?.data ?? []).flatMap((e) => (e.agent_id === null ? [] : [e.agent_id])));
  const set = (k: string, v: string) => {
    pager.setBack([]);
    setQuery({ agent_id, action, [k]: v || undefined });
  };
  return (
    <section aria-labelledby="audit-title">
      <div className="title-row"><h1 id="audit-title">Audit</h1><button type="button" onClick={page.reload}>Refresh</button></div>
      <Filters label="Filter the audit log" active={[agent_id, action].filter(Boolean).length}>
        <AgentPicker value={agent_id} onChange={(v) => set('agent_id', v)} />
        <Field label="Action">
          <input defaultValue={action} placeholder="e.g. agent.key_rotated" onBlur={(e) => set('action', e.target.value.trim())}
            onKeyDown={(e) => e.key === 'Enter' && set('action', e.currentTarget.value.trim())} />
        </Field>
      </Filters>
      <Loaded load={page} isEmpty={(p) => p.data.length === 0} empty="No audit entries match.">
        {(p) => (
          <>
            <div className="table-wrap">
              <table>
                <thead><tr><th scope="col">When</th><th scope="col">Action</th><th scope="col">Actor</th><th scope="col">Agent</th><th scope="col">Run</th><th scope="col">Details</th></tr></thead>
                <tbody>
                  {p.data.map((e) => (
                    <tr key={e.id}>
                      <td><Time iso={e.at} /></td>
                      <td className="mono">{e.action}</td>
                      <td className="mono">{e.actor_user_id ?? 'admin token'}</td>
                      <td>{e.agent_id === null ? '—' : <Link to={`/agents/${e.agent_id}`}>{agentName(lookup, e.agent_id)}</Link>}</td>
                      <td>{e.run_id === null ? '—' : <Link to={`/runs/${e.run_id}`}>#{e.run_id}</Link>}</td>
                      <td>{Object.keys(e.details).length ? <Json value={e.details} label={`Details of entry ${e.id}`} /> : '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            <Pager pager={pager} next={p.next_cursor} />
          </>
        )}
      </Loaded>
    </section>
  );
}
