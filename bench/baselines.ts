// The baselines each service figure is printed beside: minimal hand-written Fastify routes doing only the
// essential work of the endpoint they stand for, on the same database handle, in the same process, against the
// same runtime fake. No logger, no auth, no rate limit, no schema: what any implementation must pay.
import Fastify, { type FastifyInstance } from 'fastify';
import { Agent, request, type Dispatcher } from 'undici';
import type { Db } from '../src/storage/db.ts';
import { DOWNLOAD_PATH, TASK, type FakeUrls } from './types.ts';

export interface Baselines {
  app: FastifyInstance;
  /** Requests held open right now by /hold and /hold-forever. */
  heldCount(): number;
}

const WAKE_CHANNEL = 'bench_wake';

export async function buildBaselines(db: Db, fakes: FakeUrls): Promise<Baselines> {
  const app = Fastify({ logger: false });
  // Same client settings as the service's runtime client (src/runtimes/http.ts defaults).
  const dispatcher = new Agent({ connect: { timeout: 5_000 }, headersTimeout: 15_000, bodyTimeout: 15_000 });
  app.addHook('onClose', async () => dispatcher.close());
  const triggerUrl = `${fakes.trigger}/api/v1/tasks/${TASK}/trigger`;

  app.post('/hello', async () => ({ hello: 'world' }));

  // /trigger's essential work: one INSERT, one POST to the runtime, one UPDATE.
  app.post<{ Params: { agentId: string }; Body: { input?: unknown } }>('/trigger/:agentId', async (req, reply) => {
    const now = new Date();
    const { rows } = await db.query<{ id: number }>(
      `INSERT INTO runs (agent_id, status, source, input, created_at, updated_at) VALUES ($1, 'queued', 'baseline', $2::jsonb, $3, $3) RETURNING id`,
      [Number(req.params.agentId), JSON.stringify(req.body?.input ?? {}), now],
    );
    const runId = rows[0]!.id;
    const res = await request(triggerUrl, {
      dispatcher,
      method: 'POST',
      headers: { authorization: `Bearer ${fakes.triggerSecret}`, 'x-trigger-api-version': '2025-07-16', 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ payload: { runId, input: req.body?.input ?? {} }, options: { idempotencyKey: String(runId), tags: [`ars_run:${runId}`], ttl: '10m' } }),
    });
    const answer = (await res.body.json()) as { id: string };
    await db.query('UPDATE runs SET external_run_id = $2, next_poll_at = $3, updated_at = $4 WHERE id = $1', [runId, answer.id, new Date(now.getTime() + 60_000), now]);
    return reply.code(201).send({ runId, status: 'queued' });
  });

  // /callback's essential work: one guarded UPDATE.
  app.post<{ Params: { runId: string }; Body: { output?: unknown; outputs?: number } }>('/callback/:runId', async (req, reply) => {
    await db.query(
      `UPDATE runs SET output_data = $2::jsonb, outputs = coalesce($3, outputs), updated_at = now()
       WHERE id = $1 AND status = ANY($4::text[]) RETURNING id`,
      [Number(req.params.runId), JSON.stringify(req.body?.output ?? null), req.body?.outputs ?? null, ['queued', 'running']],
    );
    return reply.code(200).send();
  });

  // Wake-up floor: a held request answered when another request names it, here or through PostgreSQL NOTIFY.
  const waiters = new Map<string, () => void>();
  const wake = (key: string) => {
    waiters.get(key)?.();
    waiters.delete(key);
  };
  await db.listen(WAKE_CHANNEL, wake);
  app.post<{ Params: { key: string } }>('/hold/:key', (req) => new Promise((resolve) => waiters.set(req.params.key, () => resolve({ key: req.params.key }))));
  app.post<{ Params: { key: string } }>('/wake/:key', async (req, reply) => {
    wake(req.params.key);
    return reply.code(200).send();
  });
  app.post<{ Params: { key: string } }>('/wake-pg/:key', async (req, reply) => {
    await db.query(`SELECT pg_notify('${WAKE_CHANNEL}', $1)`, [req.params.key]);
    return reply.code(200).send();
  });

  // One proxy hop through Fastify's stream reply, nothing else (INFO: what the usual way of proxying costs).
  app.post('/proxy-download', async (req, reply) => {
    const res = await request(`${fakes.n8n}/webhook/${DOWNLOAD_PATH}`, {
      dispatcher,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ runId: 0, input: req.body ?? {} }),
      bodyTimeout: 60_000,
    });
    const type = res.headers['content-type'];
    const length = res.headers['content-length'];
    if (typeof type === 'string') reply.header('content-type', type);
    if (typeof length === 'string') reply.header('content-length', length);
    return reply.code(200).send(res.body);
  });

  // The best hand-written Node proxy: undici's dispatch (no body stream) writing each chunk straight into the
  // Node response, pausing the upstream while the response wants a drain. The floor the service's download is held to.
  const downloadTarget = new URL(`${fakes.n8n}/webhook/${DOWNLOAD_PATH}`);
  app.post('/dispatch-download', (req, reply) => {
    reply.hijack();
    const res = reply.raw;
    let upstream: Dispatcher.DispatchController | null = null;
    res.once('close', () => {
      if (!res.writableFinished) upstream?.abort(new Error('the client left'));
    });
    dispatcher.dispatch(
      {
        origin: downloadTarget.origin,
        path: downloadTarget.pathname,
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ runId: 0, input: req.body ?? {} }),
        bodyTimeout: 60_000,
      },
      {
        onRequestStart(controller) {
          upstream = controller;
        },
        onResponseStart(_controller, statusCode, headers) {
          const type = headers['content-type'];
          const length = headers['content-length'];
          if (typeof type === 'string') res.setHeader('content-type', type);
          if (typeof length === 'string') res.setHeader('content-length', length);
          res.writeHead(statusCode === 200 ? 200 : 502);
        },
        onResponseData(controller, chunk) {
          if (!res.write(chunk)) {
            controller.pause();
            res.once('drain', () => controller.resume());
          }
        },
        onResponseEnd() {
          res.end();
        },
        onResponseError() {
          res.destroy();
        },
      },
    );
  });

  // Memory floor: a request held open with nothing else attached.
  const held = new Set<object>();
  app.post('/hold-forever', (_req, reply) => {
    const token = {};
    held.add(token);
    reply.raw.once('close', () => held.delete(token));
    return new Promise(() => {});
  });

  return { app, heldCount: () => held.size + waiters.size };
}
