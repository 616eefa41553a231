// Issue 12 "slow clients", spec 4.3 over real sockets: a download whose client stops reading is ended after
// ARS_DOWNLOAD_STALL_MS — the run failed "client stopped reading", the runtime's answer (and its socket) closed —
// while a client that reads slowly but keeps reading gets the whole file (decisions.md "Slow clients").
import { connect, type Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { createTestApp, type TestApp } from '../helpers/test-app.ts';
import { N8nFake } from '../fakes/n8n-fake.ts';
import { permissiveLimiter, waitForRun, workflowAgent } from './sync-helpers.ts';

const STALL_MS = 500;
const SLOW_READER_STALL_MS = 3_000;
const n8n = new N8nFake();
let t: TestApp;
let port: number;

beforeAll(async () => {
  await n8n.start();
  t = await createTestApp({ limiter: permissiveLimiter, config: { downloadStallMs: STALL_MS } });
  port = Number(new URL(await t.app.listen({ port: 0, host: '127.0.0.1' })).port);
});
afterAll(async () => {
  await t?.close();
  await n8n.stop();
});

/** Sends the download request on a raw socket and resolves once the answer's headers have arrived. */
async function startDownload(port: number, agentId: number, auth: string): Promise<{ socket: Socket; runId: number; received: () => number }> {
  const socket = connect(port, '127.0.0.1');
  let head = '';
  let bytes = 0;
  const body = '{}';
  socket.write(
    `POST /api/agents/${agentId}/runs/trigger-and-download HTTP/1.1\r\nHost: x\r\nAuthorization: ${auth}\r\n` +
      `Content-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  );
  socket.on('error', () => undefined); // the server resets the connection it gave up on
  const runId = await new Promise<number>((resolve, reject) => {
    socket.on('data', (chunk: Buffer) => {
      bytes += chunk.length;
      if (!head.includes('\r\n\r\n')) {
        head += chunk.toString('latin1');
        const id = /\r\nx-run-id: (\d+)\r\n/i.exec(head);
        if (!head.includes('\r\n\r\n')) return;
        if (id) resolve(Number(id[1]));
        else reject(new Error(head.slice(0, 200)));
      }
    });
  });
  return { socket, runId, received: () => bytes };
}

describe('issue 12: a download client that stops reading', () => {
  it('is cut after the stall timeout: run failed "client stopped reading", the runtime answer closed', async () => {
    const a = await workflowAgent(t, n8n, { binary: { contentType: 'application/zip', size: 256 * 1024 * 1024 } }, { output_kind: 'file_download' });
    const { socket, runId } = await startDownload(port, a.agent.id, a.ingestAuth.authorization);
    socket.pause(); // reads nothing more: the kernel buffers fill, then the service's writes stall
    const started = Date.now();
    const run = await waitForRun(t, runId, (r) => r.status === 'failed');
    expect(run.error).toMatch(/^client stopped reading: nothing was taken for 0\.5 s, after \d+ bytes$/);
    expect(Date.now() - started).toBeLessThan(STALL_MS + 5_000);
    const ex = [...n8n.executions.values()].find((e) => e.workflowPath === a.path)!;
    await vi.waitFor(() => expect(ex.clientGone).toBe(true)); // the upstream socket is closed too
    expect(ex.bytesSent).toBeLessThan(256 * 1024 * 1024);
    socket.destroy();
  });

  it('a client that reads slowly, pausing less than the stall timeout each time, gets the whole file', async () => {
    // Its own service with a stall timeout far above the 300 ms pauses: the client's timers share this process's
    // event loop, which a loaded CI machine can hold for a few hundred ms, so a 500 ms limit would test the machine.
    const slow = await createTestApp({ limiter: permissiveLimiter, config: { downloadStallMs: SLOW_READER_STALL_MS } });
    const slowPort = Number(new URL(await slow.app.listen({ port: 0, host: '127.0.0.1' })).port);
    try {
      await readSlowly(slow, slowPort);
    } finally {
      await slow.close();
    }
  }, 60_000);
});

/** Spec 4.3: reads the download in bursts and expects the whole file and a completed run. */
async function readSlowly(t: TestApp, port: number): Promise<void> {
  const size = 64 * 1024 * 1024;
  const a = await workflowAgent(t, n8n, { binary: { contentType: 'application/zip', size } }, { output_kind: 'file_download' });
  const { socket, runId, received } = await startDownload(port, a.agent.id, a.ingestAuth.authorization);
  // Read in bursts: 100 ms of reading, then 300 ms (well under the stall timeout) of reading nothing.
  const pacer = setInterval(() => {
    socket.pause();
    setTimeout(() => socket.resume(), 300);
  }, 400);
  try {
    const run = await waitForRun(t, runId, (r) => r.status !== 'queued' && r.status !== 'running');
    expect(run).toMatchObject({ status: 'completed', output_data: { sizeBytes: size } });
  } finally {
    clearInterval(pacer);
  }
  socket.resume();
  await vi.waitFor(() => expect(received()).toBeGreaterThan(size));
  socket.destroy();
}
