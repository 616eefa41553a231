// Issue 12: every route × every credential × whose resource it names, one table, every cell asserted (unkey's
// route tests: one auth matrix shared by every endpoint). The routes are collected from the app itself, so a new
// route without a row fails here until someone decides who may call it.
//
// Each row sends a HARMLESS request: once past authentication it stops at a known answer that writes nothing of
// consequence (an unknown field, a missing one, a body over its limit, a run that is already terminal), so every
// cell can run against the same seeded tenants. `pass` is that answer; a refused cell is 401/403/404 as the spec,
// zones.md and admin-api.md say for that route and credential.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ADMIN_TOKEN, createTestApp, type TestApp } from '../helpers/test-app.ts';
import { seedAgent, seedOrg, seedUser, type SeededAgent } from '../helpers/fixtures.ts';
import { credentialsToken, seedConnection, zoneToken } from '../credentials/connections.ts';
import { unusedUrl } from '../fakes/fake-http-server.ts';
import { permissiveLimiter } from '../sync/sync-helpers.ts';
import { CONSOLE_PAGES } from '../../src/routes/console.ts';

// Every route the app registers, as Fastify announces it (onRoute sees HEAD twins and prefixes too).
const registered = vi.hoisted(() => new Set<string>());
vi.mock('fastify', async (importOriginal) => {
  const mod = await importOriginal<typeof import('fastify')>();
  const real = mod.default as unknown as (opts: unknown) => import('fastify').FastifyInstance;
  const collecting = (opts: unknown) => {
    const app = real(opts);
    app.addHook('onRoute', (r) => {
      for (const m of [r.method].flat()) registered.add(`${m} ${r.url}`);
    });
    return app;
  };
  return { ...mod, default: Object.assign(collecting, real) };
});

const CREDS = [
  'none', // no credential at all
  'ingestKey', // agent A's ingest key (spec 5)
  'agentKey', // agent A's agent key, with a credentials token of A (spec 4.10's two factors)
  'webhookToken', // agent A's webhook token: in the path on webhook routes, a bearer everywhere else
  'zoneJwt', // a zone JWT for agent A and an org-1 member (zones.md)
  'memberToken', // an org-1 member's personal token (bearer)
  'orgAdminToken', // an org-1 member with role admin (bearer)
  'sessionCookie', // the member's personal token as the ars_session cookie, sent by the platform's own pages
  'crossSiteCookie', // the same cookie on a request another site made the browser send (Origin, Sec-Fetch-Site)
  'platformUserToken', // a user with platform_admin = true, member of no organization
  'adminToken', // the platform-admin token of /api/admin
  'alertSecret', // agent A's runtime alert secret (a workflow runtime: bearer)
  'credentialsJwt', // a credentials JWT of agent A presented as a bearer token (a token for another audience)
  'metricsToken', // ARS_METRICS_TOKEN
] as const;
type Cred = (typeof CREDS)[number];

// none: the route names no tenant resource. own: agent A's (org 1) resources; otherAgent: agent B's (org 1);
// otherOrg: agent C's (org 2); crossed: agent A in the path, agent B's run or integration after it.
type Scope = 'none' | 'own' | 'otherAgent' | 'otherOrg' | 'crossed';
const TENANT: Scope[] = ['own', 'otherAgent', 'otherOrg'];

interface Ids {
  agent: number;
  run: number;
  runtime: number;
  connection: string;
  integration: string;
  org: string;
  user: string;
  /** The webhook token in the path: the credential itself, or a wrong one when another credential is tried. */
  hookToken: string;
}

interface Req {
  url: string;
  payload?: string | Buffer | object;
}

type Cell = number | 'pass';
interface Row {
  method: string;
  route: string;
  scopes: Scope[];
  pass: number;
  request: (x: Ids) => Req;
  /** Credentials that get past authentication, everywhere ('pass') or per scope; every other cell is `deny`. */
  allow: Partial<Record<Cred, 'pass' | Partial<Record<Scope, Cell>>>>;
  deny?: number;
  /**
   * Cells whose expected answer waits for another finding's fix, by credential, naming the finding. They are
   * asserted separately as known failures (it.fails below), so the day the fix lands the table is told.
   */
  pending?: Partial<Record<Cred, string>>;
}

/** One MiB and one byte: webhook routes (spec 8.4) stop at 413 once the token has let the request in. */
const OVERSIZE = Buffer.alloc(1024 * 1024 + 1, 0x61);
const UNKNOWN_UUID = '00000000-0000-4000-8000-000000000000';
const EVERYONE: Row['allow'] = Object.fromEntries(CREDS.map((c) => [c, 'pass']));
const everywhere = (cell: Cell): Partial<Record<Scope, Cell>> => ({ none: cell, own: cell, otherAgent: cell, otherOrg: cell, crossed: cell });
// Issue 14 roles (src/routes/admin/access.ts). The session cookie cells carry the member's credential.
const PLATFORM: Row['allow'] = { adminToken: 'pass', platformUserToken: 'pass' };
const USERS_403 = { memberToken: everywhere(403), orgAdminToken: everywhere(403), sessionCookie: everywhere(403), crossSiteCookie: everywhere(403) };
const PLATFORM_ONLY: Row['allow'] = { ...PLATFORM, ...USERS_403 };
/** Lists name no organization: every signed-in user passes and sees only their organizations' rows. */
const SIGNED_IN: Row['allow'] = { ...PLATFORM, memberToken: 'pass', orgAdminToken: 'pass', sessionCookie: 'pass', crossSiteCookie: 'pass' };
const IN_ORG: Partial<Record<Scope, Cell>> = { none: 'pass', own: 'pass', otherAgent: 'pass', otherOrg: 404 };
const MEMBER_READ: Row['allow'] = { ...PLATFORM, memberToken: IN_ORG, orgAdminToken: IN_ORG, sessionCookie: IN_ORG, crossSiteCookie: IN_ORG };
// Unsafe methods: a cross-site cookie is refused before anything else (CSRF).
const MEMBER_WRITE: Row['allow'] = { ...MEMBER_READ, crossSiteCookie: everywhere(403) };
const ORG_ADMIN: Row['allow'] = { ...PLATFORM_ONLY, orgAdminToken: IN_ORG };
const OWN_INGEST: Row['allow'] = { ingestKey: { own: 'pass' } };
// zones.md: a valid token of another agent is 403 (in either org); a run or integration of another agent is 404.
const ZONE: Row['allow'] = { zoneJwt: { own: 'pass', otherAgent: 403, otherOrg: 403, crossed: 404 } };
// zones.md proxy: any signed-in member of the agent's org (or a platform admin); a non-member 403.
const MEMBERS: Partial<Record<Scope, Cell>> = { own: 'pass', otherAgent: 'pass', otherOrg: 403 };
const PROXY_USERS: Row['allow'] = { memberToken: MEMBERS, orgAdminToken: MEMBERS, sessionCookie: MEMBERS, crossSiteCookie: MEMBERS, platformUserToken: 'pass' };
// A page of another site must not make the user's browser change anything through the cookie (CSRF): an unsafe
// method carried by the cookie alone from a cross-site origin is refused. Safe methods still load.
const PROXY_USERS_UNSAFE: Row['allow'] = { ...PROXY_USERS, crossSiteCookie: { own: 403, otherAgent: 403, otherOrg: 403 } };

function row(method: string, route: string, pass: number, request: Row['request'], allow: Row['allow'], extra: Partial<Row> = {}): Row[] {
  const scopes = extra.scopes ?? (/:/.test(route) ? TENANT : ['none']);
  const base: Row = { method, route, pass, request, allow, scopes, ...extra };
  // Fastify answers HEAD for every GET route; it is a route of its own and gets the same cells.
  return method === 'GET' ? [base, { ...base, method: 'HEAD' }] : [base];
}

const a = '/api/admin';
const ROWS: Row[] = [
  // Probes and metrics (decisions.md "Errors and logs", "Metrics": /metrics takes ARS_METRICS_TOKEN when set).
  ...row('GET', '/livez', 200, () => ({ url: '/livez' }), EVERYONE),
  ...row('GET', '/readyz', 200, () => ({ url: '/readyz' }), EVERYONE),
  ...row('GET', '/healthz', 200, () => ({ url: '/healthz' }), EVERYONE),
  ...row('GET', '/metrics', 200, () => ({ url: '/metrics' }), { metricsToken: 'pass' }),

  // Issue 13: the API reference is public (the OpenAPI document and Swagger UI's page, its assets and its copies).
  ...row('GET', '/openapi.json', 200, () => ({ url: '/openapi.json' }), EVERYONE),
  ...row('GET', '/docs', 200, () => ({ url: '/docs' }), EVERYONE),
  // Fastify announces the trailing-slash twin of a prefixed '/' route only for its HEAD route.
  { method: 'HEAD', route: '/docs/', pass: 200, request: () => ({ url: '/docs/' }), allow: EVERYONE, scopes: ['none'] },
  ...row('GET', '/docs/json', 200, () => ({ url: '/docs/json' }), EVERYONE),
  ...row('GET', '/docs/yaml', 200, () => ({ url: '/docs/yaml' }), EVERYONE),
  ...row('GET', '/docs/static/*', 200, () => ({ url: '/docs/static/swagger-ui.css' }), EVERYONE),
  ...row('GET', '/docs/static/swagger-initializer.js', 200, () => ({ url: '/docs/static/swagger-initializer.js' }), EVERYONE),
  ...row('GET', '/docs/static/index.html', 302, () => ({ url: '/docs/static/index.html' }), EVERYONE),

  // Issue 14: the console's pages and hashed assets are public (a fixture build, ARS_CONSOLE_DIR); the API they
  // call decides what the visitor may see.
  ...CONSOLE_PAGES.flatMap((p) => row('GET', p, 200, () => ({ url: p.replace('*', '7') }), EVERYONE)),
  ...row('GET', '/assets/*', 200, () => ({ url: '/assets/app-fixture1.js' }), EVERYONE),

  // Issue 14 (access.ts, docs/security.md "Roles"): the admin token and platform-admin users everywhere; an org
  // admin manages its organizations' agents, keys, connections and actions; a member reads them and starts and
  // resumes runs; another organization's resource is 404, a role too low 403. Writes stop at an unknown field
  // (400), deletes at an unknown id (404), cancel at a terminal run (409).
  ...row('POST', `${a}/orgs`, 400, () => ({ url: `${a}/orgs`, payload: { nope: 1 } }), PLATFORM_ONLY),
  ...row('GET', `${a}/orgs/:id`, 200, (x) => ({ url: `${a}/orgs/${x.org}` }), MEMBER_READ),
  ...row('POST', `${a}/orgs/:id/members`, 400, (x) => ({ url: `${a}/orgs/${x.org}/members`, payload: { nope: 1 } }), PLATFORM_ONLY),
  ...row('DELETE', `${a}/orgs/:orgId/members/:userId`, 404, (x) => ({ url: `${a}/orgs/${x.org}/members/${UNKNOWN_UUID}` }), PLATFORM_ONLY),
  ...row('POST', `${a}/users`, 400, () => ({ url: `${a}/users`, payload: { nope: 1 } }), PLATFORM_ONLY),
  ...row('GET', `${a}/users/:id`, 200, (x) => ({ url: `${a}/users/${x.user}` }), PLATFORM_ONLY),
  ...row('POST', `${a}/users/:id/tokens`, 400, (x) => ({ url: `${a}/users/${x.user}/tokens`, payload: { nope: 1 } }), PLATFORM_ONLY),
  ...row('DELETE', `${a}/users/:id/tokens/:tokenId`, 404, (x) => ({ url: `${a}/users/${x.user}/tokens/${UNKNOWN_UUID}` }), PLATFORM_ONLY),
  ...row('POST', `${a}/runtimes`, 400, () => ({ url: `${a}/runtimes`, payload: { nope: 1 } }), PLATFORM_ONLY),
  ...row('GET', `${a}/runtimes/:id`, 200, (x) => ({ url: `${a}/runtimes/${x.runtime}` }), MEMBER_READ),
  ...row('PATCH', `${a}/runtimes/:id`, 400, (x) => ({ url: `${a}/runtimes/${x.runtime}`, payload: { nope: 1 } }), PLATFORM_ONLY),
  ...row('POST', `${a}/agents`, 400, () => ({ url: `${a}/agents`, payload: { nope: 1 } }), ORG_ADMIN),
  ...row('GET', `${a}/agents/:id`, 200, (x) => ({ url: `${a}/agents/${x.agent}` }), MEMBER_READ),
  ...row('PATCH', `${a}/agents/:id`, 400, (x) => ({ url: `${a}/agents/${x.agent}`, payload: { nope: 1 } }), ORG_ADMIN),
  ...row('POST', `${a}/agents/:id/keys/:kind/rotate`, 400, (x) => ({ url: `${a}/agents/${x.agent}/keys/nope/rotate` }), ORG_ADMIN),
  ...row('POST', `${a}/agents/:id/webhook-token`, 200, (x) => ({ url: `${a}/agents/${x.agent}/webhook-token` }), ORG_ADMIN),
  ...row('POST', `${a}/agents/:id/webhook-actions`, 400, (x) => ({ url: `${a}/agents/${x.agent}/webhook-actions`, payload: { nope: 1 } }), ORG_ADMIN),
  ...row('GET', `${a}/agents/:id/webhook-actions`, 200, (x) => ({ url: `${a}/agents/${x.agent}/webhook-actions` }), ORG_ADMIN),
  ...row('POST', `${a}/agents/:id/connections`, 400, (x) => ({ url: `${a}/agents/${x.agent}/connections`, payload: { nope: 1 } }), ORG_ADMIN),
  ...row('GET', `${a}/agents/:id/connections`, 200, (x) => ({ url: `${a}/agents/${x.agent}/connections` }), ORG_ADMIN),
  ...row('GET', `${a}/connections/:id`, 200, (x) => ({ url: `${a}/connections/${x.connection}` }), ORG_ADMIN),
  ...row('PATCH', `${a}/connections/:id`, 400, (x) => ({ url: `${a}/connections/${x.connection}`, payload: { nope: 1 } }), ORG_ADMIN),
  ...row('DELETE', `${a}/connections/:id`, 404, () => ({ url: `${a}/connections/${UNKNOWN_UUID}` }), ORG_ADMIN, { scopes: ['none'] }),
  ...row('DELETE', `${a}/webhook-actions/:id`, 404, () => ({ url: `${a}/webhook-actions/${UNKNOWN_UUID}` }), ORG_ADMIN, { scopes: ['none'] }),
  ...row('GET', `${a}/runs`, 200, () => ({ url: `${a}/runs` }), SIGNED_IN),
  ...row('GET', `${a}/runs/:runId`, 200, (x) => ({ url: `${a}/runs/${x.run}` }), MEMBER_READ),
  ...row('POST', `${a}/runs/:runId/cancel`, 409, (x) => ({ url: `${a}/runs/${x.run}/cancel` }), ORG_ADMIN),
  ...row('GET', `${a}/runs/:runId/logs`, 200, (x) => ({ url: `${a}/runs/${x.run}/logs` }), MEMBER_READ),
  ...row('GET', `${a}/audit`, 200, () => ({ url: `${a}/audit` }), SIGNED_IN),
  ...row('GET', `${a}/agents`, 200, () => ({ url: `${a}/agents` }), SIGNED_IN),
  ...row('GET', `${a}/orgs`, 200, () => ({ url: `${a}/orgs` }), SIGNED_IN),
  ...row('GET', `${a}/users`, 200, () => ({ url: `${a}/users` }), PLATFORM_ONLY),
  ...row('GET', `${a}/runtimes`, 200, () => ({ url: `${a}/runtimes` }), SIGNED_IN),
  ...row('GET', `${a}/dashboard`, 200, () => ({ url: `${a}/dashboard` }), SIGNED_IN),
  // Server-sent events: the cells stop at a malformed ?since= (400), before any stream starts.
  ...row('GET', `${a}/runs/events`, 400, () => ({ url: `${a}/runs/events?since=nope` }), SIGNED_IN),
  ...row('POST', `${a}/runs/:runId/replay`, 500, (x) => ({ url: `${a}/runs/${x.run}/replay` }), MEMBER_WRITE),
  ...row('GET', `${a}/runs/:runId/deliveries`, 200, (x) => ({ url: `${a}/runs/${x.run}/deliveries` }), MEMBER_READ),
  ...row('POST', `${a}/runs/:runId/deliveries/:deliveryId/redeliver`, 404, (x) => ({ url: `${a}/runs/${x.run}/deliveries/${UNKNOWN_UUID}/redeliver` }), ORG_ADMIN),
  ...row('POST', `${a}/agents/:id/runs`, 400, (x) => ({ url: `${a}/agents/${x.agent}/runs`, payload: { nope: 1 } }), MEMBER_WRITE),
  // The run is terminal: past the role check the waitpoint stops at 409 and writes nothing.
  ...row('POST', `${a}/runs/:runId/waitpoint`, 409, (x) => ({ url: `${a}/runs/${x.run}/waitpoint`, payload: {} }), MEMBER_WRITE),

  // Issue 14: the console's sign-in. Signing in needs no credential (the token is the body; {nope:1} is 400), but a
  // page of another site may not sign the visitor in (login CSRF) nor out; GET says who the credential is.
  ...row('POST', '/api/session', 400, () => ({ url: '/api/session', payload: { nope: 1 } }), { ...EVERYONE, crossSiteCookie: everywhere(403) }),
  ...row('GET', '/api/session', 200, () => ({ url: '/api/session' }), { ...SIGNED_IN }),
  ...row('DELETE', '/api/session', 204, () => ({ url: '/api/session' }), { ...EVERYONE, crossSiteCookie: everywhere(403) }),

  // Spec 5: the ingest key of the agent in the path; another agent's key is the same 401 as none. Bodies fail
  // validation (400, or 422 where decisions.md says so), which comes after authentication and before any write.
  ...row('POST', '/api/agents/:agentId/runs/trigger', 400, (x) => ({ url: `/api/agents/${x.agent}/runs/trigger`, payload: { input: 1 } }), OWN_INGEST),
  ...row('POST', '/api/agents/:agentId/runs/trigger-and-wait', 422, (x) => ({ url: `/api/agents/${x.agent}/runs/trigger-and-wait`, payload: { input: 1 } }), OWN_INGEST),
  ...row('POST', '/api/agents/:agentId/runs/trigger-and-download', 400, (x) => ({ url: `/api/agents/${x.agent}/runs/trigger-and-download`, payload: { input: 1 } }), OWN_INGEST),
  ...row('POST', '/api/agents/:agentId/runs/register', 422, (x) => ({ url: `/api/agents/${x.agent}/runs/register`, payload: {} }), OWN_INGEST),
  ...row('POST', '/api/agents/:agentId/runs/ingest', 400, (x) => ({ url: `/api/agents/${x.agent}/runs/ingest`, payload: {} }), OWN_INGEST),

  // Spec 4.6/4.7, part 5 rule 3: the path token of the path agent is the only credential (Authorization is never
  // read); an unknown agent or a token mismatch is one 401. Past it, 1 MiB + 1 byte is 413.
  ...['POST', 'PUT', 'PATCH'].flatMap((m) => [
    ...row(m, '/api/agents/:agentId/runs/webhook/:webhookToken', 413, (x) => ({ url: `/api/agents/${x.agent}/runs/webhook/${x.hookToken}`, payload: OVERSIZE }), { webhookToken: { own: 'pass' } }),
    ...row(m, '/api/agents/:agentId/runs/webhook-and-wait/:webhookToken', 413, (x) => ({ url: `/api/agents/${x.agent}/runs/webhook-and-wait/${x.hookToken}`, payload: OVERSIZE }), { webhookToken: { own: 'pass' } }),
  ]),

  // Spec 4.8-4.10: the agent key names the agent; another agent's run is 404 (callback), 401 (waitpoint, part 7),
  // another agent's connection 404. The run is terminal, so the key's own cell stops at 409 and writes nothing.
  ...row('POST', '/api/runs/:runId/callback', 409, (x) => ({ url: `/api/runs/${x.run}/callback`, payload: { type: 'started' } }), { agentKey: { own: 'pass', otherAgent: 404, otherOrg: 404 } }),
  ...row('POST', '/api/runs/:runId/waitpoint', 409, (x) => ({ url: `/api/runs/${x.run}/waitpoint`, payload: {} }), { agentKey: { own: 'pass' } }),
  ...row('GET', '/api/credentials/:connectionId/resolve', 200, (x) => ({ url: `/api/credentials/${x.connection}/resolve` }), { agentKey: { own: 'pass', otherAgent: 404, otherOrg: 404 } }),

  // decisions.md "Runtime alerts": the runtime's alert secret; unknown runtime or another runtime's secret 401.
  ...row('POST', '/api/runtimes/:runtimeId/alerts', 400, (x) => ({ url: `/api/runtimes/${x.runtime}/alerts`, payload: '[]' }), { alertSecret: { own: 'pass' } }),

  // zones.md: the zone JWT of the path agent; bodies fail validation (400) after authentication.
  ...row('POST', '/api/zones/agents/:agentId/runs', 400, (x) => ({ url: `/api/zones/agents/${x.agent}/runs`, payload: { input: 1 } }), ZONE),
  ...row('POST', '/api/zones/agents/:agentId/runs/wait', 400, (x) => ({ url: `/api/zones/agents/${x.agent}/runs/wait`, payload: { input: 1 } }), ZONE),
  ...row('POST', '/api/zones/agents/:agentId/runs/download', 400, (x) => ({ url: `/api/zones/agents/${x.agent}/runs/download`, payload: { input: 1 } }), ZONE),
  ...row('GET', '/api/zones/agents/:agentId/runs/:runId', 200, (x) => ({ url: `/api/zones/agents/${x.agent}/runs/${x.run}` }), ZONE, { scopes: [...TENANT, 'crossed'] }),
  ...row('POST', '/api/zones/agents/:agentId/runs/:runId/waitpoint', 409, (x) => ({ url: `/api/zones/agents/${x.agent}/runs/${x.run}/waitpoint`, payload: {} }), ZONE, { scopes: [...TENANT, 'crossed'] }),
  ...row('GET', '/api/zones/agents/:agentId/credentials/:key', 200, (x) => ({ url: `/api/zones/agents/${x.agent}/credentials/${x.integration}` }), ZONE, { scopes: [...TENANT, 'crossed'] }),

  // zones.md proxy: a signed-in user (personal token or session cookie); the zone app (a local server) answers 200.
  ...['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'].flatMap((m) => {
    const safe = m === 'GET' || m === 'HEAD' || m === 'OPTIONS';
    // Issue 12 finding 1 (CSRF): an unsafe method signed in by a cross-site session cookie is 403.
    const rules = safe ? { allow: PROXY_USERS } : { allow: PROXY_USERS_UNSAFE };
    return [
      { method: m, route: '/zones/:agentId/app', pass: 200, request: (x: Ids) => ({ url: `/zones/${x.agent}/app` }), scopes: TENANT, ...rules },
      { method: m, route: '/zones/:agentId/app/*', pass: 200, request: (x: Ids) => ({ url: `/zones/${x.agent}/app/page?q=1` }), scopes: TENANT, ...rules },
      // Issue 14 console frames: only a pass made for this agent and a live session signs in (zone-frames.test.ts
      // shows one passing); no credential of the table does, wherever it is sent.
      { method: m, route: '/zones/:agentId/framed/:pass', pass: 200, request: (x: Ids) => ({ url: `/zones/${x.agent}/framed/${UNKNOWN_UUID}.${'A'.repeat(43)}` }), scopes: TENANT, allow: {} },
      { method: m, route: '/zones/:agentId/framed/:pass/*', pass: 200, request: (x: Ids) => ({ url: `/zones/${x.agent}/framed/${UNKNOWN_UUID}.${'A'.repeat(43)}/page` }), scopes: TENANT, allow: {} },
    ];
  }),
];

function expected(r: Row, cred: Cred, scope: Scope): number {
  const rule = r.allow[cred];
  const cell = rule === 'pass' ? 'pass' : rule?.[scope];
  if (cell === undefined) return r.deny ?? 401;
  return cell === 'pass' ? r.pass : cell;
}

const CONSOLE_FIXTURE = new URL('../fixtures/console-dist', import.meta.url).pathname;
const METRICS_TOKEN = 'metrics-token-0123456789abcdef0123456789';
let t: TestApp;
let zoneApp: Server;
let agents: Record<'A' | 'B' | 'C' | 'D', SeededAgent & { run: number; connection: string; integration: string; alertSecret: string }>;
let users: { member: string; orgAdmin: string; platformUser: string; otherOrgUser: string };
let headersOf: Record<Cred, Record<string, string>>;

beforeAll(async () => {
  zoneApp = createServer((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('zone app'));
  await new Promise<void>((resolve) => zoneApp.listen(0, '127.0.0.1', resolve));
  const zoneAppUrl = `http://127.0.0.1:${(zoneApp.address() as AddressInfo).port}/`;
  t = await createTestApp({ limiter: permissiveLimiter, config: { metricsToken: METRICS_TOKEN, consoleDir: CONSOLE_FIXTURE, outboundAllowHosts: ['127.0.0.1'] } });
  const runtimeUrl = await unusedUrl(); // nothing here may reach a runtime
  const org1 = await seedOrg(t, 'Org one');
  const org2 = await seedOrg(t, 'Org two');
  const seed = async (orgId: string, label: string) => {
    const alertSecret = `alert-secret-${label}-0123456789abcdef0123456789`;
    const s = await seedAgent(t, {
      orgId, allow_webhook_triggers: true, zone_app_url: zoneAppUrl,
      runtime: { kind: 'workflow', baseUrl: runtimeUrl, apiKey: 'k', alertSecret },
    });
    const { rows } = await t.db.query<{ id: number }>(
      "INSERT INTO runs (agent_id, status, source, started_at, completed_at) VALUES ($1, 'completed', 'trigger', now(), now()) RETURNING id",
      [s.agent.id],
    );
    const integration = `crm-${label}`;
    const connection = await seedConnection(t, s.agent.id, { integrationId: integration, type: 'api_key', secret: { value: `secret-${label}` } });
    return { ...s, run: rows[0]!.id, connection, integration, alertSecret };
  };
  agents = { A: await seed(org1, 'a'), B: await seed(org1, 'b'), C: await seed(org2, 'c'), D: await seed(org2, 'd') };
  users = {
    member: await seedUser(t, { orgId: org1 }),
    orgAdmin: await seedUser(t, { orgId: org1, role: 'admin' }),
    platformUser: await seedUser(t, { platformAdmin: true }),
    otherOrgUser: await seedUser(t, { orgId: org2 }),
  };
  const personal = async (userId: string) => {
    const res = await t.app.inject({ method: 'POST', url: `${a}/users/${userId}/tokens`, headers: { authorization: `Bearer ${ADMIN_TOKEN}` }, payload: {} });
    expect(res.statusCode, res.body).toBe(201);
    return (res.json() as { token: string }).token;
  };
  const A = agents.A;
  const member = await personal(users.member);
  const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
  headersOf = {
    none: {},
    ingestKey: A.ingestAuth,
    agentKey: { ...A.agentAuth, 'x-credentials-token': await credentialsToken(t, A.agent, A.run) },
    webhookToken: bearer(A.webhookToken!),
    zoneJwt: bearer(await zoneToken(t, A.agent, users.member)),
    memberToken: bearer(member),
    orgAdminToken: bearer(await personal(users.orgAdmin)),
    sessionCookie: { cookie: `theme=dark; ars_session=${member}`, 'sec-fetch-site': 'same-origin' }, // as the platform's own pages send it
    crossSiteCookie: { cookie: `theme=dark; ars_session=${member}`, origin: 'https://evil.example', 'sec-fetch-site': 'cross-site', referer: 'https://evil.example/' },
    platformUserToken: bearer(await personal(users.platformUser)),
    adminToken: bearer(ADMIN_TOKEN),
    alertSecret: bearer(A.alertSecret),
    credentialsJwt: bearer(await credentialsToken(t, A.agent, A.run)),
    metricsToken: bearer(METRICS_TOKEN),
  };
}, 120_000);

afterAll(async () => {
  await t?.close();
  await new Promise((resolve) => zoneApp?.close(resolve));
});

function idsFor(scope: Scope, cred: Cred): Ids {
  const path = { none: agents.A, own: agents.A, otherAgent: agents.B, otherOrg: agents.C, crossed: agents.A }[scope];
  const child = scope === 'crossed' ? agents.B : path;
  return {
    agent: path.agent.id,
    run: child.run,
    runtime: path.runtimeId!,
    connection: child.connection,
    integration: child.integration,
    org: path.orgId,
    user: scope === 'otherOrg' ? users.otherOrgUser : users.member,
    hookToken: cred === 'webhookToken' ? agents.A.webhookToken! : 'not-the-webhook-token-0123456789abcdefghijk',
  };
}

async function wrongCells(r: Row, include: (cred: Cred) => boolean): Promise<string[]> {
  const wrong: string[] = [];
  for (const scope of r.scopes) {
    for (const cred of CREDS.filter(include)) {
      const { url, payload } = r.request(idsFor(scope, cred));
      const res = await t.app.inject({
        method: r.method as 'GET',
        url,
        headers: { ...headersOf[cred], ...(payload !== undefined && !Buffer.isBuffer(payload) ? { 'content-type': 'application/json' } : {}) },
        ...(payload !== undefined && { payload }),
      });
      const want = expected(r, cred, scope);
      if (res.statusCode !== want) wrong.push(`${cred} × ${scope}: expected ${want}, got ${res.statusCode} ${res.body.slice(0, 120)}`);
    }
  }
  return wrong;
}

describe('issue 12: auth matrix', () => {
  it('every route the app registers has a row, and every row is a registered route', () => {
    const rows = new Set(ROWS.map((r) => `${r.method} ${r.route}`));
    expect([...registered].filter((r) => !rows.has(r)).sort(), 'routes without a row: add them to ROWS').toEqual([]);
    expect([...rows].filter((r) => !registered.has(r)).sort(), 'rows for routes that do not exist').toEqual([]);
  });

  it.each(ROWS.map((r) => [`${r.method} ${r.route}`, r] as const))('%s', async (_label, r) => {
    expect(await wrongCells(r, (cred) => !r.pending?.[cred])).toEqual([]);
  });

  // Known failures: cells another finding's fix will make right. When one starts passing, move it into the table.
  const pending = ROWS.filter((r) => r.pending);
  it.fails.each(pending.map((r) => [`${r.method} ${r.route}: ${Object.values(r.pending!).join('; ')}`, r] as const))('pending %s', async (_label, r) => {
    expect(await wrongCells(r, (cred) => Boolean(r.pending?.[cred]))).toEqual([]);
  });
});
