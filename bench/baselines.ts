// The baselines each service figure is printed beside: minimal hand-written Fastify routes doing the work of the
// endpoint they stand for, on the same database handle, in the same process, against the same runtime fake. No
// logger, no schema, no metrics. /trigger and /callback also check the bearer key and count the spec's rate limit,
// as any implementation must (issue 15 measures them against "a hand-written route doing the same work"); their
// bare floors, without either, are printed for information.
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { Agent, request, type Dispatcher } from 'undici';
import type { Db } from '../src/storage/db.ts';
import { digest } from '../src/lib/secrets.ts';
import { bucketUpsertSql } from '../src/rate-limits/rate-guard.ts';
import { LIMITS, windowOf } from '../src/rate-limits/rate-limiter.ts';
import { DOWNLOAD_PATH, TASK, type FakeUrls } from './types.ts';

export interface Baselines {
  app: FastifyInstance;
  /** Requests held open right now by /hold, /trigger-and-hold and /hold-forever. */
  heldCount(): number;
}

const WAKE_CHANNEL = 'bench_wake';
const RUN_WAKE_CHANNEL = 'bench_run_wake';

/** A request's count in its agent's bucket of the minute (spec 8.1), made by the request's write. */
interface RateCount {
  key: string;
  limit: number;
}

/**
 * The count as a CTE of the request's write (`cte`: the service's own bucket upsert, spec 8.1's one-minute bucket),
 * and the condition (`within`) under which that write applies. Appends the count's parameters to `params`.
 */
function counted(count: RateCount, params: unknown[]): { cte: string; within: string } {
  const [key, windowStart, limit] = [params.push(count.key), params.push(windowOf(new Date()).start), params.push(count.limit)];
  return { cte: `WITH rate_count AS (${bucketUpsertSql(`$${key}`, `$${windowStart}::timestamptz`)})`, within: `(SELECT count FROM rate_count) <= $${limit}` };
}

export async function buildBaselines(db: Db, fakes: FakeUrls): Promise<Baselines> {
  const app = Fastify({ logger: false });
  // Same client settings as the service's runtime client (src/runtimes/http.ts defaults).
  const dispatcher = new Agent({ connect: { timeout: 5_000 }, headersTimeout: 15_000, bodyTimeout: 15_000 });
  app.addHook('onClose', async () => dispatcher.close());
  const triggerUrl = `${fakes.trigger}/api/v1/tasks/${TASK}/trigger`;
  const triggerHeaders = { authorization: `Bearer ${fakes.triggerSecret}`, 'x-trigger-api-version': '2025-07-16', accept: 'application/json' };

  app.post('/hello', async () => ({ hello: 'world' }));

  // The essential work of /trigger: one INSERT, one POST to the runtime, one UPDATE (the routes below add the spec's checks).
  const trigger = async (agentId: number, input: unknown, count: RateCount | null): Promise<{ runId: number; externalId: string } | null> => {
    const now = new Date();
    const params: unknown[] = [agentId, JSON.stringify(input ?? {}), now];
    const c = count ? counted(count, params) : { cte: '', within: 'true' };
    const { rows } = await db.query<{ id: number }>(
      `${c.cte} INSERT INTO runs (agent_id, status, source, input, created_at, updated_at)
       SELECT $1::bigint, 'queued', 'baseline', $2::jsonb, $3::timestamptz, $3::timestamptz WHERE ${c.within} RETURNING id`,
      params,
    );
    if (rows.length === 0) return null;
    const runId = rows[0]!.id;
    const res = await request(triggerUrl, {
      dispatcher,
      method: 'POST',
      headers: { ...triggerHeaders, 'content-type': 'application/json' },
      body: JSON.stringify({ payload: { runId, input: input ?? {} }, options: { idempotencyKey: String(runId), tags: [`ars_run:${runId}`], ttl: '10m' } }),
    });
    const answer = (await res.body.json()) as { id: string };
    await db.query('UPDATE runs SET external_run_id = $2, next_poll_at = $3, updated_at = $4 WHERE id = $1', [runId, answer.id, new Date(now.getTime() + 60_000), now]);
    return { runId, externalId: answer.id };
  };
  // The essential work of /callback: one guarded UPDATE. With `end`, the run's completion (the wake-up's same work
  // below), announced to every instance by a NOTIFY of the same statement when `end.notify`.
  const callback = async (
    runId: number,
    agentId: number | null,
    body: { output?: unknown; outputs?: number } | undefined,
    count: RateCount | null,
    end: { notify: boolean } | null = null,
  ): Promise<boolean> => {
    const params: unknown[] = [runId, JSON.stringify(body?.output ?? null), body?.outputs ?? null, ['queued', 'running']];
    const owner = agentId === null ? '' : ` AND agent_id = $${params.push(agentId)}`;
    const c = count ? counted(count, params) : { cte: '', within: 'true' };
    const completion = end ? `, status = 'completed', completed_at = now(), next_poll_at = NULL` : '';
    const notify = end?.notify ? `, pg_notify('${RUN_WAKE_CHANNEL}', id::text)` : '';
    const { rows } = await db.query(
      `${c.cte} UPDATE runs SET output_data = $2::jsonb, outputs = coalesce($3, outputs)${completion}, updated_at = now()
       WHERE id = $1 AND status = ANY($4::text[])${owner} AND ${c.within} RETURNING id${notify}`,
      params,
    );
    return rows.length > 0;
  };

  // The bare floors (INFO): the essential work and nothing else.
  app.post<{ Params: { agentId: string }; Body: { input?: unknown } }>('/bare/trigger/:agentId', async (req, reply) => {
    const started = await trigger(Number(req.params.agentId), req.body?.input, null);
    return reply.code(201).send({ runId: started!.runId, status: 'queued' });
  });
  app.post<{ Params: { runId: string }; Body: { output?: unknown; outputs?: number } }>('/bare/callback/:runId', async (req, reply) => {
    await callback(Number(req.params.runId), null, req.body, null);
    return reply.code(200).send();
  });

  // The same work as the service's endpoints (issue 15: "a hand-written route doing the same work"): the essential
  // work plus what spec 4.1/4.8 and 8.1 oblige any implementation to do, each the cheapest hand-written way — the
  // bearer key checked by its SHA-256 digest (the agent cached per digest after its first read), and the per-agent
  // count of the minute in the shared store, made by the request's own write as a CTE. Over the limit the write
  // applies nothing: /trigger answers 429, /callback 404 (it cannot tell that from a run not found); either fails
  // the figure, which needs 201/200.
  const keys = { ingest: new Map<string, number>(), agent: new Map<string, number>() };
  const agentOf = async (kind: 'ingest' | 'agent', header: string | undefined): Promise<number | null> => {
    const token = /^Bearer (\S+)$/.exec(header ?? '')?.[1];
    if (!token) return null;
    const d = digest(token);
    const hex = d.toString('hex');
    const hit = keys[kind].get(hex);
    if (hit !== undefined) return hit;
    const { rows } = await db.query<{ id: number }>(`SELECT id FROM agents WHERE ${kind}_key_digest = $1`, [d]);
    if (rows[0]) keys[kind].set(hex, Number(rows[0].id));
    return rows[0] ? Number(rows[0].id) : null;
  };
  // Callers held by /trigger-and-hold (the wake-up's same work, below), and the task's return value they are answered with.
  const runWaiters = new Map<string, { externalId: string; wake: (output: Promise<unknown>) => void }>();
  const returnValue = async (externalId: string): Promise<unknown> => {
    const res = await request(`${fakes.trigger}/api/v3/runs/${externalId}`, { dispatcher, headers: triggerHeaders });
    return ((await res.body.json()) as { output?: unknown }).output;
  };
  const wakeRun = (runId: string, output?: Promise<unknown>) => {
    const waiter = runWaiters.get(runId);
    if (!waiter) return;
    runWaiters.delete(runId);
    waiter.wake(output ?? returnValue(waiter.externalId));
  };
  /** The key check and the counted trigger of a same-work route; null once the request has been answered 401 or 429. */
  const triggered = async (req: FastifyRequest<{ Params: { agentId: string }; Body: { input?: unknown } }>, reply: FastifyReply) => {
    const agentId = Number(req.params.agentId);
    if ((await agentOf('ingest', req.headers.authorization)) !== agentId) {
      void reply.code(401).send({ error: 'unauthorized' });
      return null;
    }
    const started = await trigger(agentId, req.body?.input, { key: `baseline-trigger:${agentId}`, limit: LIMITS.trigger });
    if (!started) void reply.code(429).send({ error: 'rate_limited' });
    return started;
  };
  app.post<{ Params: { agentId: string }; Body: { input?: unknown } }>('/trigger/:agentId', async (req, reply) => {
    const started = await triggered(req, reply);
    return started ? reply.code(201).send({ runId: started.runId, status: 'queued' }) : reply;
  });
  /** /callback's same work; with `end`, the run's completion, waking its caller here or (`notify`) wherever it is held. */
  const callbackRoute = (end: { notify: boolean } | null) => async (req: FastifyRequest<{ Params: { runId: string }; Body: { output?: unknown; outputs?: number } }>, reply: FastifyReply) => {
    const agentId = await agentOf('agent', req.headers.authorization);
    if (agentId === null) return reply.code(401).send({ error: 'unauthorized' });
    const { runId } = req.params;
    // A completion reported where its caller is held: the return value is read beside the write, as the service does.
    const waiter = end && !end.notify ? runWaiters.get(runId) : undefined;
    const early = waiter && returnValue(waiter.externalId);
    if (!(await callback(Number(runId), agentId, req.body, { key: `baseline-callback:${agentId}`, limit: LIMITS.callbackAndWaitpoint }, end))) {
      early?.catch(() => undefined); // read for nothing: the run was not this agent's, not open, or over the limit
      return reply.code(404).send({ error: 'not_found' });
    }
    if (waiter) wakeRun(runId, early);
    return reply.code(200).send();
  };
  app.post('/callback/:runId', callbackRoute(null));

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

  // The wake-up's same work (INFO beside the floor above): a task run started and its caller held, as
  // trigger-and-wait does; its completion written by the callback's work (key, rate count, one guarded UPDATE to
  // `completed`, committed before anyone is told) and announced here or by a NOTIFY sent with that write; the held
  // caller then answered with the task's return value read from the runtime (spec 4.2). A completion reported to the
  // instance holding the caller starts that read at once, beside the write, as the service does.
  await db.listen(RUN_WAKE_CHANNEL, (runId) => wakeRun(runId));
  app.post<{ Params: { agentId: string }; Body: { input?: unknown } }>('/trigger-and-hold/:agentId', async (req, reply) => {
    const started = await triggered(req, reply);
    if (!started) return reply;
    const output = await new Promise<unknown>((wake) => runWaiters.set(String(started.runId), { externalId: started.externalId, wake }));
    return reply.code(200).send({ runId: started.runId, status: 'completed', output });
  });
  app.post('/complete/:runId', callbackRoute({ notify: false }));
  app.post('/complete-pg/:runId', callbackRoute({ notify: true }));

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

  return { app, heldCount: () => held.size + waiters.size + runWaiters.size };
}
