// One real HTTP receiver for the outbound client's tests (post and fetch): the path picks its behaviour and
// `?status=` the status answered.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class TestReceiver {
  readonly received: Received[] = [];
  port = 0;
  readonly #server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      this.received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks).toString() });
      const url = new URL(req.url ?? '/', 'http://x');
      const status = Number(url.searchParams.get('status') ?? '200');
      if (url.pathname === '/hang') return; // never answers
      if (url.pathname === '/redirect') {
        res.writeHead(status, { location: '/target' }).end();
        return;
      }
      if (url.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(5 * 1024 * 1024, 1));
        return;
      }
      if (url.pathname === '/endless') {
        res.writeHead(200);
        const chunk = Buffer.alloc(16 * 1024, 1);
        const timer = setInterval(() => res.write(chunk), 5);
        res.on('close', () => clearInterval(timer));
        return;
      }
      res.writeHead(status, { 'content-type': 'text/plain' }).end('thanks');
    });
  });

  async start(): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(0, '127.0.0.1', resolve));
    this.port = (this.#server.address() as AddressInfo).port;
    return this;
  }

  /** Drops kept-alive sockets, so the next request opens (and checks) a new connection. */
  dropConnections(): void {
    this.#server.closeAllConnections();
  }

  async stop(): Promise<void> {
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }
}
