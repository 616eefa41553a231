// The web console (issue 14): a single-page app built by Vite into ARS_CONSOLE_DIR and served from this origin,
// so it signs in with the same-origin session cookie and needs no CORS. Every page path answers index.html (the
// app routes in the browser); /assets/* are Vite's content-hashed files. All of it is public and left out of the
// OpenAPI document (`hide`), like /docs: what the console may see is decided by the API it calls.
import { randomBytes } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import type { FastifyInstance, FastifyReply } from 'fastify';
import fastifyStatic from '@fastify/static';

/** The paths the console's router knows; anything else stays a 404 (decisions.md "The console"). */
export const CONSOLE_PAGES = [
  '/', '/sign-in', '/runs', '/runs/*', '/review', '/agents', '/agents/*', '/dashboard', '/audit', '/admin', '/admin/*', '/zone-apps/*',
] as const;

// The console runs only its own scripts (issue 35): `'self'` would also admit whatever a tenant's zone app serves
// under /zones/*/app/ on this origin, turning any HTML injection into script. So each page answer carries a fresh
// nonce, put on the build's own <script> and <link> tags and nowhere else; no other script runs. Styles are the
// build's own (React sets styles through the DOM, which CSP allows); it may frame only this origin (the zone proxy)
// and may not be framed itself (clickjacking of its buttons).
export function consoleCsp(nonce: string | null): string {
  return [
    "default-src 'self'",
    nonce === null ? "script-src 'none'" : `script-src 'nonce-${nonce}'`,
    ...CONSOLE_CSP_REST,
  ].join('; ');
}

const CONSOLE_CSP_REST = [
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
  "form-action 'self'",
];

/** The build's tags that load its code get the page's nonce; the built index.html has no inline script. */
export function withNonce(html: string, nonce: string): string {
  return html.replace(/<(script|link)\b/gi, `<$1 nonce="${nonce}"`);
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Console not built</title></head>
<body><h1>The console is not built</h1>
<p>Run <code>npm run console:build</code> (or set <code>ARS_CONSOLE_DIR</code> to a built console) and reload.</p>
<p>The API is available: see <a href="/docs">/docs</a>.</p></body></html>
`;

const YEAR_MS = 365 * 24 * 3_600_000;

function secure(reply: FastifyReply, nonce: string | null = null): FastifyReply {
  return reply
    .header('content-security-policy', consoleCsp(nonce))
    .header('x-content-type-options', 'nosniff')
    .header('referrer-policy', 'same-origin');
}

export default async function consoleRoutes(app: FastifyInstance): Promise<void> {
  const root = app.ctx.config.consoleDir;
  // serve: false — the routes are declared below, so the same routes exist whether or not the console is built
  // (the auth matrix and the OpenAPI check see one app); sendFile still guards against paths leaving `root`.
  // preCompressed: the build writes each asset's .br and .gz beside it (console/vite.config.ts); the one the browser
  // accepts is sent, with Content-Encoding and Vary (issue 40 item 8: 280 KB of script went uncompressed).
  await app.register(fastifyStatic, { root, serve: false, suppressWarning: true, preCompressed: true });

  // Checked per request, not at start: `npm run console:build` on a running service takes effect on reload. The
  // page is read again only when the file changed.
  const index = path.join(root, 'index.html');
  let cached: { mtimeMs: number; html: string } | null = null;
  const indexHtml = async (): Promise<string | null> => {
    const info = await stat(index).catch(() => null);
    if (!info) return null;
    if (cached?.mtimeMs !== info.mtimeMs) cached = { mtimeMs: info.mtimeMs, html: await readFile(index, 'utf8') };
    return cached.html;
  };
  const built = async () => (await stat(index).catch(() => null)) !== null;

  const page = async (_req: unknown, reply: FastifyReply) => {
    const html = await indexHtml();
    if (html === null) return secure(reply).code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    const nonce = randomBytes(18).toString('base64');
    // no-cache: a new build's index.html names new asset hashes and must be seen at once (and each answer has its nonce).
    return secure(reply, nonce).header('cache-control', 'no-cache').type('text/html; charset=utf-8').send(withNonce(html, nonce));
  };
  for (const url of CONSOLE_PAGES) app.get(url, { schema: { hide: true } }, page);

  app.get<{ Params: { '*': string } }>('/assets/*', { schema: { hide: true } }, async (req, reply) => {
    secure(reply);
    if (!(await built())) return reply.code(503).header('cache-control', 'no-store').type('text/html; charset=utf-8').send(NOT_BUILT);
    // Hashed names: a file under a name never changes, so browsers may keep it for a year without asking.
    return reply.sendFile(`assets/${req.params['*']}`, { maxAge: YEAR_MS, immutable: true });
  });
}
