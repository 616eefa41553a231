// /dashboard: runs by status per day and outputs per agent per day, with totals, for a chosen period. Plain CSS
// bars (no chart library); each bar has its number in text, so nothing is shown by colour or length alone.
import { api, RUN_STATUSES, unwrap } from '../api/client.ts';
import { agentName, useAgents } from '../lib/agents.ts';
import { setQuery, useLocation } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Field, Loaded, Time } from '../components/ui.tsx';

const PERIODS: Array<[string, number]> = [['Last 24 hours', 1], ['Last 7 days', 7], ['Last 30 days', 30], ['Last 90 days', 90]];

export function Dashboard() {
  const { query } = useLocation();
  const days = Number(query.get('days') ?? 7);
  const agentId = query.get('agent_id') ?? '';
  const agents = useAgents();
  const data = useLoad(() => {
    const to = new Date();
    const from = new Date(to.getTime() - days * 86_400_000);
    return unwrap(api.GET('/api/admin/dashboard', { params: { query: { from: from.toISOString(), to: to.toISOString(), ...(agentId && { agent_id: agentId }) } } }));
  }, [days, agentId]);

  return (
    <section aria-labelledby="dash-title">
      <div className="title-row"><h1 id="dash-title">Dashboard</h1><button type="button" onClick={data.reload}>Refresh</button></div>
      <form className="filters" aria-label="Dashboard filters" onSubmit={(e) => e.preventDefault()}>
        <Field label="Period">
          <select value={days} onChange={(e) => setQuery({ days: e.target.value, agent_id: agentId })}>
            {PERIODS.map(([label, d]) => <option key={d} value={d}>{label}</option>)}
          </select>
        </Field>
        <Field label="Agent">
          <select value={agentId} onChange={(e) => setQuery({ days: String(days), agent_id: e.target.value })}>
            <option value="">All agents</option>
            {agents.data?.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
          </select>
        </Field>
      </form>
      <Loaded load={data}>
        {(d) => {
          const byDay = new Map<string, Record<string, number>>();
          for (const r of d.runs_by_status) byDay.set(r.day, { ...byDay.get(r.day), [r.status]: r.count });
          const dayTotal = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
          const maxDay = Math.max(1, ...[...byDay.values()].map(dayTotal));
          const outputsByAgent = new Map<number, number>();
          for (const o of d.outputs_by_agent) outputsByAgent.set(o.agentId, (outputsByAgent.get(o.agentId) ?? 0) + o.outputs);
          const maxOut = Math.max(1, ...outputsByAgent.values());
          return (
            <>
              <p className="muted">From <Time iso={d.from} /> to <Time iso={d.to} /></p>
              <div className="totals">
                <div className="card stat"><span className="stat-n">{d.totals.runs}</span> runs</div>
                <div className="card stat"><span className="stat-n">{d.totals.outputs}</span> outputs</div>
                {RUN_STATUSES.map((s) => <div key={s} className="card stat"><span className="stat-n">{d.totals.by_status[s]}</span> <span className={`badge status-${s}`}>{s}</span></div>)}
              </div>
              <h2>Runs by status per day</h2>
              {byDay.size === 0 ? <p className="muted empty">No runs in this period.</p> : (
                <ul className="bars" aria-label="Runs by status per day">
                  {[...byDay].sort(([a], [b]) => a.localeCompare(b)).map(([day, counts]) => (
                    <li key={day}>
                      <span className="bar-label">{day}</span>
                      <span className="bar-track" aria-hidden="true">
                        {RUN_STATUSES.filter((s) => counts[s]).map((s) => (
                          <span key={s} className={`bar status-${s}`} style={{ width: `${(100 * counts[s]!) / maxDay}%` }} title={`${s}: ${counts[s]}`} />
                        ))}
                      </span>
                      <span className="bar-value">{RUN_STATUSES.filter((s) => counts[s]).map((s) => `${s} ${counts[s]}`).join(', ')}</span>
                    </li>
                  ))}
                </ul>
              )}
              <h2>Outputs per agent</h2>
              {outputsByAgent.size === 0 ? <p className="muted empty">No outputs in this period.</p> : (
                <>
                  <ul className="bars" aria-label="Outputs per agent in the period">
                    {[...outputsByAgent].sort(([, a], [, b]) => b - a).map(([id, n]) => (
                      <li key={id}>
                        <span className="bar-label">{agentName(agents.data, id)}</span>
                        <span className="bar-track" aria-hidden="true"><span className="bar status-completed" style={{ width: `${(100 * n) / maxOut}%` }} /></span>
                        <span className="bar-value">{n}</span>
                      </li>
                    ))}
                  </ul>
                  <details>
                    <summary>Outputs per agent per day</summary>
                    <div className="table-wrap">
                      <table>
                        <thead><tr><th scope="col">Day</th><th scope="col">Agent</th><th scope="col">Outputs</th></tr></thead>
                        <tbody>
                          {d.outputs_by_agent.map((o) => <tr key={`${o.day}-${o.agentId}`}><td>{o.day}</td><td>{agentName(agents.data, o.agentId)}</td><td>{o.outputs}</td></tr>)}
                        </tbody>
                      </table>
                    </div>
                  </details>
                </>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
