// The console's pages by path: the same list src/routes/console.ts serves index.html for.
import type { ReactNode } from 'react';
import { Link, matchPath } from '../lib/router.tsx';
import { Runs } from './Runs.tsx';
import { RunDetail } from './RunDetail.tsx';
import { Review } from './Review.tsx';
import { Agents } from './Agents.tsx';
import { AgentDetail } from './AgentDetail.tsx';
import { Dashboard } from './Dashboard.tsx';
import { Audit } from './Audit.tsx';
import { Admin } from './Admin.tsx';
import { ZoneApp } from './ZoneApp.tsx';

const ROUTES: Array<[string, (p: Record<string, string>) => ReactNode]> = [
  ['/', () => <Runs />],
  ['/runs', () => <Runs />],
  ['/runs/:id', (p) => <RunDetail key={p.id} id={p.id!} />],
  ['/review', () => <Review />],
  ['/agents', () => <Agents />],
  ['/agents/new', () => <AgentDetail key="new" id={null} />],
  ['/agents/:id', (p) => <AgentDetail key={p.id} id={p.id!} />],
  ['/dashboard', () => <Dashboard />],
  ['/audit', () => <Audit />],
  ['/admin', () => <Admin />],
  ['/admin/:tab', (p) => <Admin tab={p.tab} />],
  ['/zone-apps/:agentId', (p) => <ZoneApp key={p.agentId} agentId={p.agentId!} />],
];

export function pageFor(path: string): ReactNode {
  for (const [pattern, render] of ROUTES) {
    const params = matchPath(pattern, path);
    if (params) return render(params);
  }
  return (
    <section>
      <h1>Page not found</h1>
      <p>Nothing lives at {path}. <Link to="/runs">Go to runs</Link>.</p>
    </section>
  );
}
