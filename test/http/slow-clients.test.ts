// Issue 12 "slow clients" over real sockets (net.Socket: the bytes and their timing are the point): a request
// must arrive within ARS_REQUEST_TIMEOUT_MS (headers within ARS_HEADERS_TIMEOUT_MS), an idle kept-alive
// connection is closed after ARS_KEEP_ALIVE_TIMEOUT_MS — and a held answer, which only SENDS slowly, is not cut by
// any of them (decisions.md "Slow clients").
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { TriggerDevFake } from '../fakes/trigger-dev-fake.ts';
import { permissiveLimiter, runCount, taskAgent } from '../sync/sync-helpers.ts';
import type { SeededAgent } from '../helpers/fixtures.ts';

const REQUEST_TIMEOUT_MS = 1_500;
const HEADERS_TIMEOUT_MS = 1_000;
const KEEP_ALIVE_MS = 500;

const trig = new TriggerDevFake();
let t: TestApp;
let port: number;
let agent: SeededAgent;

beforeAll(async () => {
  await trig.start();
  t = await createTestApp({
    limiter: permissiveLimiter,
    config: { requestTimeoutMs: REQUEST_TIMEOUT_MS, headersTimeoutMs: HEADERS_TIMEOUT_MS, keepAliveTimeoutMs: KEEP_ALIVE_MS },
  });
  agent = await taskAgent(t, trig);
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(async () => {
  await t?.close();
  await trig.stop();
});

interface Conversation {
  socket: Socket;
  /** Everything the server sent, as text. */
  received(): string;
  /** Resolves with the ms from the start when the server closed the connection. */
  closed: Promise<number>;
}

function open(): Promise<Conversation> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = connect(port, '127.0.0.1');
    let text = '';
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => (text += chunk));
    const closed = new Promise<number>((done) => socket.on('close', () => done(Date.now() - started)));
    socket.on('error', () => undefined); // a reset after the answer is expected
    socket.once('connect', () => resolve({ socket, received: () => text, closed }));
    socket.once('error', reject);
  });
}

/** Writes `text` one byte every `everyMs` until the socket closes or the text runs out. */
async function trickle(c: Conversation, text: string, everyMs: number): Promise<void> {
  for (const byte of text) {
    if (c.socket.destroyed || c.socket.writableEnded) return;
    c.socket.write(byte);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}

const statusOf = (text: string) => Number(/^HTTP\/1\.1 (\d{3})/.exec(text)?.[1]);
const bodyOf = (text: string) => JSON.parse(text.slice(text.indexOf('\r\n\r\n') + 4)) as Record<string, unknown>;

describe('issue 12: slow clients', () => {
  it('a body trickled one byte at a time is cut at the request timeout: 408 request_timeout, nothing written', async () => {
    const before = await runCount(t, agent.agent.id);
    const body = JSON.stringify({ input: { text: 'x'.repeat(200) } });
    const c = await open();
    c.socket.write(
      `POST /api/agents/${agent.agent.id}/runs/trigger HTTP/1.1\r\nHost: x\r\nAuthorization: ${agent.ingestAuth.authorization}\r\n` +
        `Content-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n`,
    );
    void trickle(c, body, 100); // ten bytes a second: the whole body would take 20 s
    const closedAfter = await c.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS - 50);
    expect(closedAfter).toBeLessThan(REQUEST_TIMEOUT_MS + 2_500); // checked every second
    expect(statusOf(c.received())).toBe(408);
    expect(bodyOf(c.received())).toMatchObject({ code: 'request_timeout', error: expect.stringContaining('did not arrive in time'), requestId: expect.any(String) });
    expect(await runCount(t, agent.agent.id)).toBe(before);
  });

  it('headers trickled one byte at a time are cut at the headers timeout', async () => {
    const c = await open();
    void trickle(c, `GET /livez HTTP/1.1\r\nHost: x\r\nX-Slow: ${'y'.repeat(100)}\r\n\r\n`, 100);
    const closedAfter = await c.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(HEADERS_TIMEOUT_MS - 50);
    expect(closedAfter).toBeLessThan(HEADERS_TIMEOUT_MS + 2_500);
    expect(statusOf(c.received())).toBe(408);
  });

  it('an idle kept-alive connection is closed after the keep-alive timeout', async () => {
    const c = await open();
    c.socket.write('GET /livez HTTP/1.1\r\nHost: x\r\n\r\n');
    const closedAfter = await c.closed;
    expect(statusOf(c.received())).toBe(200);
    expect(closedAfter).toBeLessThan(KEEP_ALIVE_MS + 2_000);
  });

  it('a held answer longer than the request timeout is not cut: the timeout covers receiving the request only', async () => {
    const c = await open();
    const body = JSON.stringify({ input: {}, timeoutMs: REQUEST_TIMEOUT_MS + 1_500 });
    c.socket.write(
      `POST /api/agents/${agent.agent.id}/runs/trigger-and-wait HTTP/1.1\r\nHost: x\r\nConnection: close\r\n` +
        `Authorization: ${agent.ingestAuth.authorization}\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
    );
    const closedAfter = await c.closed;
    expect(closedAfter).toBeGreaterThanOrEqual(REQUEST_TIMEOUT_MS + 1_500 - 50);
    expect(statusOf(c.received())).toBe(202); // spec 4.2: the window elapsed, the run goes on
    expect(bodyOf(c.received())).toMatchObject({ timedOut: true, status: 'queued' });
  });
});
