// The shell: who is signed in (GET /api/session), the header and navigation, and the page for the current path.
// Unauthenticated visits go to /sign-in?next=<where they were going> and come back after signing in.
import { useCallback, useEffect, useRef, useState } from 'react';
import { sessionApi, type SessionView } from './api/session.ts';
import { api, ApiFailure, unwrap } from './api/client.ts';
import { Link, navigate, useLocation } from './lib/router.tsx';
import { accessOf, SessionContext } from './lib/session.tsx';
import { pageFor } from './pages/routes.tsx';
import { useConnection, useRunStream, type Connection } from './lib/events.ts';
import { SignIn } from './pages/SignIn.tsx';

/** `ended`: the session stopped being accepted while in use (signed out elsewhere, expired, revoked). */
type Who = { state: 'checking' } | { state: 'out'; ended?: boolean } | { state: 'in'; session: SessionView } | { state: 'error'; message: string };

const CONNECTION_LABEL: Readonly<Record<Connection, string>> = {
  connecting: 'Connecting…',
  live: '● Live',
  reconnecting: 'Reconnecting…',
  offline: 'Offline',
  unavailable: 'Live updates off',
};

export function App() {
  const { path } = useLocation();
  const [who, setWho] = useState<Who>({ state: 'checking' });

  const check = useCallback(() => {
    sessionApi.current().then(
      (session) => setWho({ state: 'in', session }),
      (e: unknown) => setWho(e instanceof ApiFailure && e.status === 401 ? { state: 'out' } : { state: 'error', message: String(e instanceof Error ? e.message : e) }),
    );
  }, []);
  useEffect(check, [check]);
  // A platform admin is a member of no organization: their names come from the org list instead.
  const [orgNames, setOrgNames] = useState(new Map<string, string>());
  const platformAdmin = who.state === 'in' && who.session.user.platform_admin;
  useEffect(() => {
    if (!platformAdmin) return;
    unwrap(api.GET('/api/admin/orgs', { params: { query: { limit: '200' } } })).then(
      (p) => setOrgNames(new Map(p.data.map((o) => [o.id, o.name]))),
      () => undefined, // names stay ids; nothing else depends on them
    );
  }, [platformAdmin]);
  // Any API call answered 401 (session expired, signed out elsewhere) sends the user back to sign in.
  useEffect(() => {
    const out = () => setWho({ state: 'out', ended: true });
    window.addEventListener('ars:signed-out', out);
    return () => window.removeEventListener('ars:signed-out', out);
  }, []);

  const signOut = useCallback(() => {
    void sessionApi.signOut().finally(() => {
      setWho({ state: 'out' });
      navigate('/sign-in', { replace: true });
    });
  }, []);

  useRunStream(who.state === 'in'); // one live stream for every page while signed in
  const connection = useConnection();
  const ended = who.state === 'out' && who.ended === true;
  useEffect(() => {
    if (who.state !== 'out' || path === '/sign-in') return;
    // Issue 40 item 6: a session that ended under an open page says so on the sign-in page.
    navigate(`/sign-in?next=${encodeURIComponent(location.pathname + location.search)}${ended ? '&reason=session-ended' : ''}`, { replace: true });
  }, [who.state, path, ended]);

  // Issue 40 item 6: after a navigation keyboard focus moves to the new page (it stayed on <body>, or on a link
  // of the page that is gone), so a screen reader announces it and Tab starts from its top.
  const main = useRef<HTMLElement>(null);
  const first = useRef(true);
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    main.current?.focus({ preventScroll: true });
  }, [path]);

  if (who.state === 'checking') return <p className="muted page" role="status">Loading…</p>;
  if (who.state === 'error') {
    return (
      <main className="page" id="main">
        <p className="notice error" role="alert">The service could not be reached: {who.message}</p>
        <button type="button" onClick={check}>Retry</button>
      </main>
    );
  }
  if (who.state === 'out' || path === '/sign-in') return <SignIn signedIn={(session) => setWho({ state: 'in', session })} />;

  const access = accessOf(who.session, signOut, orgNames);
  const { user } = who.session;
  const page = pageFor(path);
  const nav: Array<[string, string]> = [['/runs', 'Runs'], ['/review', 'Review'], ['/agents', 'Agents'], ['/dashboard', 'Dashboard'], ['/audit', 'Audit']];
  if (access.platformAdmin) nav.push(['/admin', 'Admin']);
  const current = (to: string) => path === to || path.startsWith(`${to}/`) || (to === '/runs' && path === '/');
  return (
    <SessionContext.Provider value={access}>
      <a className="skip" href="#main">Skip to content</a>
      <header className="top">
        <Link to="/runs" className="brand">Agent Run Service</Link>
        <nav aria-label="Main">
          <ul>
            {nav.map(([to, label]) => (
              <li key={to}><Link to={to} aria-current={current(to) ? 'page' : undefined}>{label}</Link></li>
            ))}
          </ul>
        </nav>
        <span className={`live live-${connection}`} role="status" title="Live run updates">{CONNECTION_LABEL[connection]}</span>
        <div className="who">
          <span title={user.email ?? undefined}>{user.name ?? user.email ?? 'Platform admin'}</span>
          <button type="button" onClick={signOut}>Sign out</button>
        </div>
      </header>
      {connection === 'offline' && (
        <p className="notice error outage" role="alert">
          The service cannot be reached. This page shows what it last loaded and updates again when the service is back.
        </p>
      )}
      <main className="page" id="main" tabIndex={-1} ref={main}>{page}</main>
    </SessionContext.Provider>
  );
}
