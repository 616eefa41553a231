// A zone app at the network boundary (node:http): records what reaches it and offers streaming endpoints that
// hand control to the test between chunks, so "streamed, not buffered" is observed rather than timed.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

export interface ZoneAppRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

export class FakeZoneApp {
  readonly requests: ZoneAppRequest[] = [];
  /** /upload: resolves with the first chunk as soon as it arrives (before the request body has ended). */
  firstUploadChunk!: Promise<string>;
  #onFirstChunk!: (c: string) => void;
  /** /download: the second chunk is written only after the test calls this. */
  releaseDownload!: () => void;
  #downloadGate!: Promise<void>;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #url = '';

  constructor() {
    this.reset();
    this.#server = createServer((req, res) => {
      const rec: ZoneAppRequest = { method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: '' };
      this.requests.push(rec);
      const path = (req.url ?? '').split('?')[0]!;
      if (path.endsWith('/upload')) {
        let first = true;
        req.on('data', (c: Buffer) => {
          rec.body += c.toString('utf8');
          if (first) this.#onFirstChunk(c.toString('utf8'));
          first = false;
        });
        req.on('end', () => {
          res.writeHead(200, { 'content-type': 'text/plain' });
          res.end(`received ${rec.body.length} bytes`);
        });
        return;
      }
      if (path.endsWith('/hostile')) {
        // Every header a hostile zone app might send to act for the platform origin; `?csp=` (repeatable) adds its
        // own Content-Security-Policy headers.
        const csp = new URL(req.url ?? '/', 'http://x').searchParams.getAll('csp');
        req.resume();
        const hostile: Record<string, string | string[]> = {
          'content-type': 'text/html',
          ...(csp.length > 0 ? { 'content-security-policy': csp } : {}),
          'content-security-policy-report-only': "default-src 'none'",
          'set-cookie': ['ars_session=planted; Path=/', 'zone_pref=dark; Path=/zones/', '__Host-x=1; Path=/; Secure'],
          'service-worker-allowed': '/',
          'clear-site-data': '"cookies", "storage"',
          'access-control-allow-origin': 'null',
          'access-control-allow-credentials': 'true',
          'access-control-expose-headers': 'x-zone-app',
          'strict-transport-security': 'max-age=63072000; includeSubDomains; preload',
          'alt-svc': 'h2="evil.example:443"',
          nel: '{"report_to":"z","max_age":31536000,"include_subdomains":true}',
          'report-to': '{"group":"z","max_age":31536000,"endpoints":[{"url":"https://evil.example/r"}]}',
          'www-authenticate': 'Basic realm="Sign in to the platform"',
          'x-content-type-options': 'off',
          'cross-origin-opener-policy': 'unsafe-none',
          'cross-origin-resource-policy': 'cross-origin',
          'x-zone-app': 'yes',
        };
        res.writeHead(200, hostile);
        res.end('<script>fetch("/zones/2/app/secrets", {credentials: "include"})</script>');
        return;
      }
      req.on('data', (c: Buffer) => (rec.body += c.toString('utf8')));
      req.on('end', async () => {
        if (path.endsWith('/download')) {
          res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-disposition': 'attachment; filename="r.bin"' });
          res.write('first-chunk;');
          await this.#downloadGate;
          res.end('second-chunk');
          return;
        }
        res.writeHead(201, {
          'content-type': 'application/json',
          'set-cookie': ['ars_session=planted-by-zone-app; Path=/', 'zone_pref=dark; Path=/'],
          'x-zone-app': 'yes',
          connection: 'x-upstream-hop',
          'x-upstream-hop': 'must-not-pass',
        });
        res.end(JSON.stringify({ method: rec.method, url: rec.url, body: rec.body }));
      });
    });
    this.#server.on('connection', (s) => {
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  reset(): void {
    this.requests.length = 0;
    this.firstUploadChunk = new Promise((resolve) => (this.#onFirstChunk = resolve));
    this.#downloadGate = new Promise((resolve) => (this.releaseDownload = resolve));
  }

  get url(): string {
    return this.#url;
  }

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    const addr = this.#server.address();
    if (!addr || typeof addr === 'string') throw new Error('no address');
    this.#url = `http://127.0.0.1:${addr.port}`;
    return this;
  }

  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
