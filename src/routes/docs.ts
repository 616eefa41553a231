// GET /openapi.json (the document, public and cacheable) and /docs (a reader for it: Swagger UI, served from the
// package itself, so it works without internet). Both are left out of the document they serve (`hide`).
import { createHash } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fastifySwaggerUi from '@fastify/swagger-ui';
import { documentText } from '../http/openapi-document.ts';

// Swagger UI runs its own scripts and styles only; React sets inline style attributes, and the document is fetched
// from this origin. Nothing else may load, run or frame the page (it shares the origin of the session cookie).
// Scripts only from /docs/static/ (issue 35): `'self'` would admit what a tenant's zone app serves on this origin.
const SCRIPT_SELF = "script-src 'self'";
const DOCS_CSP = [
  "default-src 'none'",
  SCRIPT_SELF,
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** The page's script sources: Swagger UI's own folder, on the origin the page was asked on and on the public one. */
function docsScripts(publicOrigin: string, req: FastifyRequest): string {
  const origins = new Set([publicOrigin, `${req.protocol}://${req.host}`]);
  return `script-src ${[...origins].map((o) => `${o}/docs/static/`).join(' ')}`;
}

export default async function docsRoutes(app: FastifyInstance): Promise<void> {
  const publicOrigin = new URL(app.ctx.config.publicUrl).origin;
  // @fastify/swagger-ui knows only one static policy; each /docs answer gets the page's origins in place of 'self'.
  app.addHook('onSend', (req, reply, payload, done) => {
    if (req.url.startsWith('/docs')) reply.header('content-security-policy', DOCS_CSP.replace(SCRIPT_SELF, docsScripts(publicOrigin, req)));
    done(null, payload);
  });

  // Built on first use (the document exists once the app is ready) and kept: it changes only with the code.
  let served: { text: string; etag: string } | null = null;
  const document = () => {
    if (!served) {
      const text = documentText(app);
      served = { text, etag: `"${createHash('sha256').update(text).digest('base64url').slice(0, 27)}"` };
    }
    return served;
  };

  app.get('/openapi.json', { schema: { hide: true } }, async (req, reply) => {
    const { text, etag } = document();
    reply.header('cache-control', 'public, max-age=300').header('etag', etag);
    if (req.headers['if-none-match'] === etag) return reply.code(304).send();
    return reply.type('application/json; charset=utf-8').send(text);
  });

  await app.register(fastifySwaggerUi, {
    routePrefix: '/docs',
    theme: { title: 'Agent Run Service API' },
    uiConfig: { deepLinking: true, validatorUrl: null },
  });
}
