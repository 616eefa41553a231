// The demo's zone app (zones.md): a small web app shown inside the console through the zone proxy. It acts for the
// signed-in user with the zone JWT the proxy puts on every request (X-Zone-Token), never with an agent key: its
// form starts a run of its agent through the zone API and shows the answer. Its script also shows what the
// sandbox keeps from it (the console's page and the admin API), so the browser suite can check the isolation.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ZoneApp {
  url: string;
  stop(): Promise<void>;
}

interface ZoneClaims {
  sub: string;
  agent_id: number;
}

export async function startZoneApp(serviceUrl: () => string): Promise<ZoneApp> {
  const server = createServer((req, res) => {
    handle(req, res, serviceUrl()).catch((err: Error) => page(res, 502, `<p role="alert">The zone app failed: ${escape(err.message)}</p>`));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

async function handle(req: IncomingMessage, res: ServerResponse, serviceUrl: string): Promise<void> {
  const path = new URL(req.url ?? '/', 'http://zone.invalid').pathname;
  if (req.method === 'GET' && path === '/app.js') {
    res.writeHead(200, { 'content-type': 'text/javascript; charset=utf-8' }).end(SCRIPT);
    return;
  }
  const token = req.headers['x-zone-token'];
  // The service verifies the JWT it minted before it forwards; a real app verifies it too, with the agent's
  // zone_jwt_secret. The demo only reads who it is for.
  const claims = typeof token === 'string' ? readClaims(token) : null;
  if (!claims) return page(res, 401, '<p role="alert">Open this app from the console: it needs the zone token the platform sends.</p>');
  if (req.method === 'POST' && path === '/run') {
    const form = new URLSearchParams(await readBody(req));
    const answer = await fetch(`${serviceUrl}/api/zones/agents/${claims.agent_id}/runs/wait`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token as string}`, 'content-type': 'application/json' },
      body: JSON.stringify({ input: { company: form.get('company') || 'Initech' } }),
    });
    const run = (await answer.json()) as Record<string, unknown>;
    return page(res, 200, `<h2>Run ${escape(String(run.runId))}: ${escape(String(run.status))}</h2>
<pre aria-label="Run output">${escape(JSON.stringify(run.output_data ?? run.error ?? run, null, 2))}</pre>
<p><a href="./">Start another</a></p>`);
  }
  if (req.method === 'GET' && (path === '/' || path === '')) {
    return page(res, 200, `<p>Signed in as user <code>${escape(claims.sub)}</code>, through a zone token.</p>
<form method="post" action="run">
  <label>Company <input name="company" value="Initech"></label>
  <button type="submit">Enrich</button>
</form>
<h2>Isolation</h2>
<ul>
  <li>Script: <output id="script">did not run</output></li>
  <li>The console's page: <output id="parent">not tried</output></li>
  <li>The admin API with the console's cookie: <output id="admin-api">not tried</output></li>
</ul>`);
  }
  return page(res, 404, '<p role="alert">Not found.</p>');
}

function readClaims(token: string): ZoneClaims | null {
  try {
    const claims = JSON.parse(Buffer.from(token.split('.')[1] ?? '', 'base64url').toString('utf8')) as Partial<ZoneClaims>;
    return typeof claims.sub === 'string' && typeof claims.agent_id === 'number' ? { sub: claims.sub, agent_id: claims.agent_id } : null;
  } catch {
    return null;
  }
}

async function readBody(req: IncomingMessage): Promise<string> {
  let body = '';
  for await (const chunk of req) {
    body += String(chunk);
    if (body.length > 10_000) throw new Error('form too large');
  }
  return body;
}

function page(res: ServerResponse, status: number, body: string): void {
  res.writeHead(status, { 'content-type': 'text/html; charset=utf-8' }).end(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Lead enricher</title>
<style>body{font:15px system-ui,sans-serif;margin:1rem;color:#1b1f24}pre{background:#f3f4f6;padding:.5rem}</style>
</head><body><h1>Lead enricher</h1>${body}<script src="app.js"></script></body></html>`);
}

function escape(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

// Runs inside the console's sandboxed frame: an opaque origin, so the console's DOM and its session are out of reach.
const SCRIPT = `
const show = (id, text) => { const el = document.getElementById(id); if (el) el.textContent = text; };
show('script', 'ran');
try { show('parent', 'READ: ' + window.parent.document.title); } catch { show('parent', 'blocked'); }
fetch('/api/admin/runs', { credentials: 'include' })
  .then((r) => show('admin-api', 'READ: HTTP ' + r.status))
  .catch(() => show('admin-api', 'blocked'));
`;
