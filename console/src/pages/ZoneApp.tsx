// /zone-apps/{agentId}: the agent's zone app inside the platform, through the zone proxy (same origin, signed in by
// the session cookie). Sandboxed without allow-same-origin: the app cannot read the console's cookie or DOM.
import { api, unwrap } from '../api/client.ts';
import { Link } from '../lib/router.tsx';
import { useLoad } from '../lib/useLoad.ts';
import { Loaded } from '../components/ui.tsx';

export function ZoneApp({ agentId }: { agentId: string }) {
  const agent = useLoad(() => unwrap(api.GET('/api/admin/agents/{id}', { params: { path: { id: Number(agentId) } } })), [agentId]);
  return (
    <Loaded load={agent}>
      {(a) => (
        <section className="zone-app" aria-labelledby="zone-title">
          <div className="title-row">
            <h1 id="zone-title">{a.name}</h1>
            <Link to={`/agents/${a.id}`}>Agent settings</Link>
          </div>
          {a.zone_app_url ? (
            <iframe title={`${a.name} zone app`} src={`/zones/${encodeURIComponent(agentId)}/app/`} sandbox="allow-scripts allow-forms allow-popups" />
          ) : <p className="muted empty">This agent has no zone app.</p>}
        </section>
      )}
    </Loaded>
  );
}
