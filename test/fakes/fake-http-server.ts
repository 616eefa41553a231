// What the runtime fakes share: a real node:http server on 127.0.0.1 (port 0), a log of what it received, and
// network faults a test can switch on. Each fake adds its runtime's routes in handle().
import { createServer, type IncomingHttpHeaders, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';

export interface RecordedRequest {
  method: string;
  path: string; // without the query string
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  rawBody: string;
  /** Parsed JSON body, or undefined when empty or not JSON. */
  body: unknown;
  at: number; // Date.now() when the body had been read
}

export type Fault =
  /** The connection is reset as soon as it is accepted: the process behind a proxy is gone. */
  | { kind: 'down' }
  /** The answer is delayed, then given normally. */
  | { kind: 'slow'; delayMs: number }
  /** The request is read and never answered. */
  | { kind: 'hang' }
  /** Headers at once, then one body byte every `everyMs`, never ending: never idle long enough for an idle timer. */
  | { kind: 'trickle'; everyMs: number }
  /** A proxy's error page or similar: valid HTTP, wrong content (default 200 text/html). */
  | { kind: 'garbage'; status?: number; contentType?: string; body?: string }
  /** Bytes that are not HTTP at all. */
  | { kind: 'not-http' };

interface ActiveFault {
  fault: Fault;
  match: (path: string) => boolean;
  remaining: number;
}

export abstract class FakeHttpServer {
  readonly requests: RecordedRequest[] = [];
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #faults: ActiveFault[] = [];
  #url = '';

  constructor() {
    this.#server = createServer((req, res) => void this.#dispatch(req, res));
    this.#server.on('connection', (socket) => {
      this.#sockets.add(socket);
      socket.on('close', () => this.#sockets.delete(socket));
      const down = this.#takeFault(null, 'down');
      if (down) socket.destroy();
    });
  }

  /** `http://127.0.0.1:<port>`, without a trailing slash. */
  get url(): string {
    if (!this.#url) throw new Error('fake server not started');
    return this.#url;
  }

  /** Listens on 127.0.0.1; port 0 (tests) picks a free one. */
  async start(port = 0): Promise<this> {
    await new Promise<void>((resolve) => this.#server.listen(port, '127.0.0.1', resolve));
    const addr = this.#server.address();
    if (!addr || typeof addr === 'string') throw new Error('no address');
    this.#url = `http://127.0.0.1:${addr.port}`;
    return this;
  }

  /** Closes the server and every open connection, held ones included. */
  async stop(): Promise<void> {
    for (const s of this.#sockets) s.destroy();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  /**
   * Switches a fault on for requests whose path matches (all when omitted), for `times` requests (default:
   * until cleared). A 'down' fault applies to connections, so its path filter is ignored.
   */
  setFault(fault: Fault, opts: { path?: string | RegExp; times?: number } = {}): void {
    const { path } = opts;
    const match = path === undefined ? () => true : typeof path === 'string' ? (p: string) => p.startsWith(path) : (p: string) => path.test(p);
    this.#faults.push({ fault, match, remaining: opts.times ?? Infinity });
  }

  clearFaults(): void {
    this.#faults = [];
  }

  /** Requests whose path starts with (or matches) `path`, optionally of one method. */
  requestsTo(path: string | RegExp, method?: string): RecordedRequest[] {
    return this.requests.filter(
      (r) => (typeof path === 'string' ? r.path.startsWith(path) : path.test(r.path)) && (!method || r.method === method),
    );
  }

  protected abstract handle(req: IncomingMessage, res: ServerResponse, rec: RecordedRequest): void | Promise<void>;

  /** Headers every answer of this runtime carries. */
  protected commonHeaders(): Record<string, string> {
    return {};
  }

  protected sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
    const text = JSON.stringify(body);
    res.writeHead(status, {
      ...this.commonHeaders(),
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(text)),
      ...headers,
    });
    res.end(text);
  }

  async #dispatch(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const rawBody = Buffer.concat(chunks).toString('utf8');
    let body: unknown;
    try {
      body = rawBody ? JSON.parse(rawBody) : undefined;
    } catch {
      body = undefined;
    }
    const rec: RecordedRequest = { method: req.method ?? '', path: url.pathname, query: url.searchParams, headers: req.headers, rawBody, body, at: Date.now() };
    this.requests.push(rec);

    // 'down' also hits requests on kept-alive connections, which never pass through 'connection' again.
    if (this.#takeFault(null, 'down')) {
      req.socket.destroy();
      return;
    }
    const fault = this.#takeFault(url.pathname);
    if (fault?.kind === 'hang') return;
    if (fault?.kind === 'trickle') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('[');
      const timer = setInterval(() => res.write(' '), fault.everyMs);
      res.once('close', () => clearInterval(timer));
      return;
    }
    if (fault?.kind === 'not-http') {
      req.socket.end('THIS IS NOT HTTP\r\n\r\n');
      return;
    }
    if (fault?.kind === 'garbage') {
      const text = fault.body ?? '<html><body><h1>502 Bad Gateway</h1></body></html>';
      res.writeHead(fault.status ?? 200, { 'content-type': fault.contentType ?? 'text/html', 'content-length': String(Buffer.byteLength(text)) });
      res.end(text);
      return;
    }
    if (fault?.kind === 'slow') await new Promise((r) => setTimeout(r, fault.delayMs));
    try {
      await this.handle(req, res, rec);
    } catch (err) {
      if (!res.headersSent) this.sendJson(res, 500, { error: `fake failure: ${(err as Error).message}` });
      else res.destroy();
    }
  }

  #takeFault(path: string | null, only?: Fault['kind']): Fault | null {
    const active = this.#faults.find((f) => f.remaining > 0 && (only ? f.fault.kind === only : f.fault.kind !== 'down' && path !== null && f.match(path)));
    if (!active) return null;
    active.remaining -= 1;
    return active.fault;
  }
}

/** A URL on which nothing listens, for "runtime unreachable" tests (connection refused at once). */
export async function unusedUrl(): Promise<string> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const addr = server.address();
  await new Promise<void>((resolve) => server.close(() => resolve()));
  if (!addr || typeof addr === 'string') throw new Error('no address');
  return `http://127.0.0.1:${addr.port}`;
}
