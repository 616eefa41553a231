// A fake OAuth 2.0 token endpoint over a real socket (node:http): answers refresh_token grants, counts calls,
// can hold answers until released, refuse (400 invalid_grant, 5xx) or drop the connection.
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { Socket } from 'node:net';

export interface TokenCall {
  params: URLSearchParams;
  headers: IncomingHttpHeaders;
}

export type OAuthBehaviour =
  | { kind: 'ok'; rotate?: boolean; expiresIn?: number | null; scope?: string; idToken?: string }
  | { kind: 'invalid_grant' }
  | { kind: 'server_error' }
  | { kind: 'drop' };

export class FakeOAuthServer {
  readonly calls: TokenCall[] = [];
  behaviour: OAuthBehaviour = { kind: 'ok', rotate: true, expiresIn: 3600 };
  /** When set, answers wait for this promise (to keep a refresh in flight while others pile up). */
  gate: Promise<void> | null = null;
  /** Text every refusal carries, to prove provider bodies never reach our answers or logs. */
  readonly refusalMarker = 'PROVIDER-BODY-MARKER-do-not-leak';
  /** TCP connections accepted, requests or not: proves a refused call never reached the socket. */
  connections = 0;
  #issued = 0;
  readonly #server: Server;
  readonly #sockets = new Set<Socket>();
  #url = '';

  constructor() {
    this.#server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', async () => {
        const params = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
        this.calls.push({ params, headers: req.headers });
        if (this.gate) await this.gate;
        const b = this.behaviour;
        if (b.kind === 'drop') return void req.socket.destroy();
        if (b.kind === 'server_error') {
          res.writeHead(503, { 'content-type': 'text/plain' });
          return void res.end(`upstream down ${this.refusalMarker} ${params.get('refresh_token')}`);
        }
        if (b.kind === 'invalid_grant') {
          res.writeHead(400, { 'content-type': 'application/json' });
          const description = `refresh token ${params.get('refresh_token')} revoked ${this.refusalMarker}`;
          return void res.end(JSON.stringify({ error: 'invalid_grant', error_description: description }));
        }
        this.#issued += 1;
        const body: Record<string, unknown> = { access_token: `fresh-access-${this.#issued}`, token_type: 'Bearer' };
        if (b.expiresIn !== null) body.expires_in = b.expiresIn ?? 3600;
        if (b.rotate) body.refresh_token = `rotated-refresh-${this.#issued}`;
        if (b.scope) body.scope = b.scope;
        if (b.idToken) body.id_token = b.idToken;
        res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
        res.end(JSON.stringify(body));
      });
    });
    this.#server.on('connection', (s) => {
      this.connections += 1;
      this.#sockets.add(s);
      s.on('close', () => this.#sockets.delete(s));
    });
  }

  get tokenUrl(): string {
    return `${this.#url}/oauth/token`;
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

  /** Holds every answer until the returned function is called. */
  hold(): () => void {
    let release!: () => void;
    this.gate = new Promise<void>((resolve) => (release = resolve));
    return () => {
      this.gate = null;
      release();
    };
  }
}
