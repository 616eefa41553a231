// Choosing an agent among thousands (issue 40 item 1): what is typed in the search box is asked of the service
// (GET /api/admin/agents?q=, name contains it), and the choice list offers the matches — the 50 newest when nothing
// is typed — plus the current choice, whatever its age.
import { useEffect, useId, useState } from 'react';
import { api, unwrap } from '../api/client.ts';
import { agentName, rememberAgents, useAgentLookup } from '../lib/agents.ts';
import { useLoad } from '../lib/useLoad.ts';

const SHOWN = 50;
const TYPING_PAUSE_MS = 250;

export function AgentPicker({ value, onChange, label = 'Agent' }: { value: string; onChange: (agentId: string) => void; label?: string }) {
  const id = useId();
  const [text, setText] = useState('');
  const [q, setQ] = useState('');
  useEffect(() => {
    const timer = setTimeout(() => setQ(text.trim()), TYPING_PAUSE_MS);
    return () => clearTimeout(timer);
  }, [text]);
  const matches = useLoad(async () => {
    const page = await unwrap(api.GET('/api/admin/agents', { params: { query: { limit: String(SHOWN), ...(q ? { q } : {}) } } }));
    rememberAgents(page.data);
    return page.data;
  }, [q]);
  const lookup = useAgentLookup(value ? [Number(value)] : []);
  const options = matches.data ?? [];
  return (
    <div className="field agent-picker">
      <label htmlFor={id}>{label}</label>
      <input type="search" aria-label={`${label}: find by name`} placeholder="Find by name…" maxLength={320} value={text} onChange={(e) => setText(e.target.value)} />
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">All agents</option>
        {value && !options.some((a) => String(a.id) === value) && <option value={value}>{agentName(lookup, Number(value))}</option>}
        {options.map((a) => <option key={a.id} value={a.id}>{a.name}</option>)}
      </select>
      {q && matches.data && <span className="muted" role="status">{options.length === 0 ? 'No agent matches.' : `${options.length}${options.length === SHOWN ? '+' : ''} matching`}</span>}
    </div>
  );
}
