// /dashboard: runs by status and outputs per day, and runs and outputs per agent, with totals, for a chosen period of
// whole UTC days (the API's per-day figures; a period starting at 00:00 UTC reads closed days from the rollup; today's
// runs count as of the rollup's last refresh, every minute, issue 15). Plain
// CSS bars (no chart library); each bar has its number in text, so nothing is shown by colour or length alone.
import { useState } from 'react';
import { api, RUN_STATUSES, unwrap } from '../api/client.ts';
import { agentName, useAgentLookup } from '../lib/agents.ts';
import { AgentPicker } from '../components/AgentPicker.tsx';
import { Link, setQuery, useLocation } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Field, Loaded, Time } from '../components/ui.tsx';
import { Filters } from '../components/Filters.tsx';

const DAY_MS = 86_400_000;
const PERIODS: Array<[string, number]> = [['Today (UTC)', 1], ['Last 7 days', 7], ['Last 30 days', 30], ['Last 90 days', 90]];
/** Agents shown before "Show all": at thousands of agents the page stays readable. */
const TOP_AGENTS = 20;

export function Dashboard() {
  const { query } = useLocation();
  const days = Number(query.get('days') ?? 7);
  const agentId = query.get('agent_id') ?? '';
  const [allAgents, setAllAgents] = useState(false);
  const data = useLoad(() => {
    // The last `days` UTC days, today included, up to now.
    const to = new Date();
    const from = new Date((Math.floor(to.getTime() / DAY_MS) - (days - 1)) * DAY_MS);
    return unwrap(api.GET('/api/admin/dashboard', { params: { query: { from: from.toISOString(), to: to.toISOString(), ...(agentId && { agent_id: agentId }) } } }));
  }, [days, agentId]);
  const lookup = useAgentLookup([...(agentId ? [Number(agentId)] : []), ...(data.data?.by_agent ?? []).map((a) => a.agentId)]);

  return (
    <section aria-labelledby="dash-title">
      <div className="title-row"><h1 id="dash-title">Dashboard</h1><button type="button" onClick={data.reload}>Refresh</button></div>
      <Filters label="Dashboard filters" active={[agentId].filter(Boolean).length}>
        <Field label="Period">
          <select value={days} onChange={(e) => setQuery({ days: e.target.value, agent_id: agentId })}>
            {PERIODS.map(([label, d]) => <option key={d} value={d}>{label}</option>)}
          </select>
        </Field>
        <AgentPicker value={agentId} onChange={(v) => setQuery({ days: String(days), agent_id: v })} />
      </Filters>
      <Loaded load={data}>
        {(d) => {
          const byDay = new Map<string, Record<string, number>>();
          for (const r of d.runs_by_status) byDay.set(r.day, { ...byDay.get(r.day), [r.status]: r.count });
          const dayTotal = (c: Record<string, number>) => Object.values(c).reduce((a, b) => a + b, 0);
          const maxDay = Math.max(1, ...[...byDay.values()].map(dayTotal));
          const maxDayOut = Math.max(1, ...d.outputs_by_day.map((o) => o.outputs));
          const maxAgentOut = Math.max(1, ...d.by_agent.map((a) => a.outputs));
          const shown = allAgents ? d.by_agent : d.by_agent.slice(0, TOP_AGENTS);
          return (
            <>
              <p className="muted">From <Time iso={d.from} /> to <Time iso={d.to} />. Today's runs show their status as of at most a minute or two ago; earlier days are exact.</p>
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
              <h2>Outputs per day{agentId && ` — ${agentName(lookup, Number(agentId))}`}</h2>
              {d.totals.outputs === 0 ? <p className="muted empty">No outputs in this period.</p> : (
                <ul className="bars" aria-label="Outputs per day">
                  {d.outputs_by_day.map((o) => (
                    <li key={o.day}>
                      <span className="bar-label">{o.day}</span>
                      <span className="bar-track" aria-hidden="true"><span className="bar status-completed" style={{ width: `${(100 * o.outputs) / maxDayOut}%` }} /></span>
                      <span className="bar-value">{o.outputs}</span>
                    </li>
                  ))}
                </ul>
              )}
              <h2>Agents</h2>
              {d.by_agent.length === 0 ? <p className="muted empty">No runs in this period.</p> : (
                <>
                  <p className="muted">Most outputs first. Choose an agent above to see its outputs per day.</p>
                  <div className="table-wrap">
                    <table aria-label="Runs and outputs per agent in the period">
                      <thead><tr><th scope="col">Agent</th><th scope="col">Runs</th><th scope="col">Outputs</th><th scope="col"><span className="sr-only">Share of outputs</span></th></tr></thead>
                      <tbody>
                        {shown.map((a) => (
                          <tr key={a.agentId}>
                            <td><Link to={`/dashboard?days=${days}&agent_id=${a.agentId}`}>{agentName(lookup, a.agentId)}</Link></td>
                            <td>{a.runs}</td>
                            <td>{a.outputs}</td>
                            <td className="bar-cell"><span className="bar-track" aria-hidden="true"><span className="bar status-completed" style={{ width: `${(100 * a.outputs) / maxAgentOut}%` }} /></span></td>
                          </tr>
                        ))}
                      </tbody>
                    </table>
                  </div>
                  {d.by_agent.length > TOP_AGENTS && (
                    <button type="button" onClick={() => setAllAgents(!allAgents)}>{allAgents ? `Show the top ${TOP_AGENTS}` : `Show all ${d.by_agent.length} agents`}</button>
                  )}
                </>
              )}
            </>
          );
        }}
      </Loaded>
    </section>
  );
}
