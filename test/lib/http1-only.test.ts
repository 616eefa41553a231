// Issue 38 item 7 (docs/decisions.md "Dependency majors"): undici 8 offers HTTP/2 over TLS by default; the service's
// outbound clients keep to HTTP/1.1, the protocol they were built and tested with. A TLS server records the ALPN
// protocols each client offers in its hello; the handshake then fails on the self-signed certificate, which does not
// matter here.
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import tls from 'node:tls';
import { Agent, type Dispatcher } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { guardedConnector, parseAllowList, systemResolve } from '../../src/lib/outbound-guard.ts';
import { RuntimeHttp } from '../../src/runtimes/http.ts';

describe('issue 38: outbound calls stay HTTP/1.1 under undici 8', () => {
  let server: tls.Server;
  let origin = '';
  const offered: string[][] = [];

  beforeAll(async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'ars-alpn-'));
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=localhost',
      '-keyout', path.join(dir, 'key.pem'), '-out', path.join(dir, 'cert.pem')], { stdio: 'ignore' });
    const key = readFileSync(path.join(dir, 'key.pem'));
    const cert = readFileSync(path.join(dir, 'cert.pem'));
    rmSync(dir, { recursive: true, force: true });
    server = tls.createServer({
      key,
      cert,
      ALPNCallback: ({ protocols }) => {
        offered.push(protocols);
        return protocols.includes('h2') ? 'h2' : protocols[0];
      },
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    origin = `https://127.0.0.1:${(server.address() as { port: number }).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  async function offeredBy(dispatcher: Dispatcher): Promise<string[] | undefined> {
    const before = offered.length;
    await dispatcher.request({ origin, path: '/', method: 'GET' }).catch(() => undefined); // untrusted certificate
    return offered[before];
  }

  it('the check itself: a default undici 8 Agent offers h2', async () => {
    const agent = new Agent();
    expect(await offeredBy(agent)).toContain('h2');
    await agent.close();
  });

  it('the runtime client offers only http/1.1', async () => {
    const runtimes = new RuntimeHttp();
    expect(await offeredBy(runtimes.dispatcher)).toEqual(['http/1.1']);
    await runtimes.close();
  });

  it('the guarded connector (tenant-set URLs: deliveries, token URLs, zone proxy) offers only http/1.1', async () => {
    const agent = new Agent({ connect: guardedConnector(parseAllowList(['127.0.0.1']), systemResolve, 5_000) });
    expect(await offeredBy(agent)).toEqual(['http/1.1']);
    await agent.close();
  });
});
