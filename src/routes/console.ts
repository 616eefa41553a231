// The web console (issue 14): a single-page app built by Vite into ARS_CONSOLE_DIR and served from this origin,
// so it signs in with the same-origin session cookie and needs no CORS. Every page path answers index.html (the
// app routes in the browser); /assets/* are Vite's content-hashed files. All of it is public and left out of the
// OpenAPI document (`hide`), like /docs: what the console may see is decided by the API it calls.
import { access } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

/** The paths the console's router knows; anything else stays a 404 (decisions.md "The console"). */
export const CONSOLE_PAGES = [
  '/', '/sign-in', '/runs', '/runs/*', '/review', '/agents', '/agents/*', '/dashboard', '/audit', '/admin', '/admin/*', '/zone-apps/*',
] as const;

// The console ships only its own bundled scripts and styles (React sets styles through the DOM, which CSP allows);
// it may frame only this origin (the zone proxy) and may not be framed itself (clickjacking of its buttons).
export const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
].join('; ');

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The console is not built</h1>
<p>Run <code>npm run console:build</code> (or set <code>ARS_CONSOLE_DIR</code> to a built console) and reload.</p>
<p>The API is available: see <a href="/docs">/docs</a>.</p></body></html>
`;

const YEAR_MS = 365 * 24 * 3_600_000;

function secure(reply: FastifyReply): FastifyReply {
  return reply
    .header('content-security-policy', CONSOLE_CSP)
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin');
}

export default async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const root = app.ctx.config.consoleDir;
  // serve: false — the routes are declared below, so the same routes exist whether or not the console is built
  // (the auth matrix and the OpenAPI check see one app); sendFile still guards against paths leaving `root`.
  await app.register(fastifyStatic, { root, serve: false, suppressWarning: true });

  // Checked per request, not at start: `npm run console:build` on a running service takes effect on reload.
  const built = async () => access(path.join(root, 'index.html')).then(() => true, () => false);

  const page = async (_req: unknown, reply: FastifyReply) => {
    secure(reply);
    if (!(await built())) return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    // no-cache: a new build's index.html names new asset hashes and must be seen at once.
    return reply.header('cache-control', 'no-cache').sendFile('index.html', { cacheControl: false });
  };
  for (const url of CONSOLE_PAGES) app.get(url, { schema: { hide: true } }, page);

  app.get<{ Params: { '*': string } }>('/assets/*', { schema: { hide: true } }, async (req, reply) => {
    secure(reply);
    if (!(await built())) return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    // Hashed names: a file under a name never changes, so browsers may keep it for a year without asking.
    return reply.sendFile(`assets/${req.params['*']}`, { maxAge: YEAR_MS, immutable: true });
  });
}
