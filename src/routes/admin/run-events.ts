// Issue 14 "Runs update live": GET /runs/events, run status changes as server-sent events. One feed per app
// (admin/run-feed.ts) reads the changes; each stream here only filters and writes them. The console refetches
// the list when it (re)connects; `Last-Event-ID` or `?since=` replays the changes after that position, a few
// seconds early (at least once), or says `refetch` when there are too many to replay. The stream's first bytes
// (`retry:`) come once the subscription is live.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import { errors } from '../../errors.ts';
import { parseTimestamp, TIMESTAMP_RULE } from '../../lib/timestamps.ts';
import { OVERLAP_MS, RunFeed, runsChangedSince, type RunFeedEvent } from '../../admin/run-feed.ts';
import { rawAnswer } from '../../http/openapi-components.ts';
import { visibleOrgIds } from '../../orgs/principal.ts';

/** Tests change these before building the app. */
export const liveStreamSettings = {
  /** A comment line this often keeps proxies and load balancers from closing an idle stream. */
  heartbeatMs: 15_000,
  /** Streams one instance holds at most; more are 503 (each holds a socket and a subscription). */
  maxStreams: 500,
  /** The feed's catch-up period (run-feed.ts). */
  pollMs: 2_000,
};
/** Changes replayed on reconnect at most; beyond, the client is told to refetch. */
const REPLAY_LIMIT = 500;
/** A client this far behind (bytes unsent) is cut off rather than buffered for without end. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

const EventsQuery = Type.Object({ since: Type.Optional(Type.String({ maxLength: 64 })) });

const EVENT_STREAM = rawAnswer(
  'Server-sent events: `event: run` with `data: {"runId","agentId","orgId","status","updated_at"}` and `id` (for Last-Event-ID) per status change, a `: ping` comment every 15 s, and `event: refetch` when a reconnect missed too much to replay.',
  'text/event-stream',
  { type: 'string' },
);

export default async function runEventRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  let feed: RunFeed | null = null;
  const streams = new Set<ServerResponse>();

  // Before the server stops: open streams would otherwise hold app.close() (and shutdown) until clients leave.
  app.addHook('preClose', async () => {
    for (const res of streams) res.end();
    await feed?.close();
  });

  const schema = {
    operationId: 'adminRunEvents',
    summary: 'Run status changes as they happen (server-sent events)',
    querystring: EventsQuery,
    response: { 200: EVENT_STREAM },
  };
  app.get('/runs/events', { schema }, async (req, reply) => {
    const since = replayFrom(req.query.since, req.headers['last-event-id']);
    if (streams.size >= liveStreamSettings.maxStreams) throw errors.unavailable('service_unavailable', 'too many live streams on this instance');
    feed ??= new RunFeed(app.ctx.db, app.log, { pollMs: liveStreamSettings.pollMs });
    openStream(app.ctx.db, feed, streams, req, reply, since);
  });
}

/** The position to replay from: `?since=` wins over the Last-Event-ID an EventSource sends on reconnect. */
function replayFrom(since: string | undefined, lastEventId: string | string[] | undefined): Date | null {
  if (since !== undefined) {
    const at = parseTimestamp(since);
    if (!at) throw errors.invalid('querystring.since', TIMESTAMP_RULE);
    return at;
  }
  // Our own ids (`<updated_at>/<runId>`); anything else is not ours and means no replay.
  const id = typeof lastEventId === 'string' ? lastEventId.split('/')[0] : undefined;
  return id ? parseTimestamp(id) : null;
}

function openStream(db: FastifyInstance['ctx']['db'], feed: RunFeed, streams: Set<ServerResponse>, req: FastifyRequest, reply: FastifyReply, since: Date | null): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no', // nginx: pass each event on, do not buffer the response
    connection: 'keep-alive',
  });
  streams.add(res);

  // Live events wait in `pending` until the replay is written, so the stream stays in updated_at order.
  let pending: RunFeedEvent[] | null = since ? [] : null;
  const send = (e: RunFeedEvent): void => {
    if (pending) pending.push(e);
    else write(res, `id: ${e.updated_at}/${e.runId}\nevent: run\ndata: ${JSON.stringify(e)}\n\n`);
  };
  const orgIds = visibleOrgIds(req.principal!);
  const unsubscribe = feed.subscribe({ orgIds }, send);
  // The first bytes say the subscription is live: a client that fetches the list after them misses no change.
  void feed.ready().then(() => write(res, 'retry: 2000\n\n'));
  const heartbeat = setInterval(() => write(res, ': ping\n\n'), liveStreamSettings.heartbeatMs);
  heartbeat.unref();
  const done = (): void => {
    clearInterval(heartbeat);
    unsubscribe();
    streams.delete(res);
  };
  res.on('close', done);
  req.raw.on('close', () => res.end());

  if (since) {
    runsChangedSince(db, new Date(since.getTime() - OVERLAP_MS), REPLAY_LIMIT, orgIds)
      .then((missed) => {
        if (missed.length === REPLAY_LIMIT) write(res, 'event: refetch\ndata: {}\n\n');
        const live = pending ?? [];
        pending = null;
        if (missed.length < REPLAY_LIMIT) for (const e of missed) send(e);
        for (const e of live) send(e);
      })
      .catch((err: unknown) => {
        req.log.warn({ err }, 'live runs: replay failed; the client is told to refetch');
        write(res, 'event: refetch\ndata: {}\n\n');
        const live = pending ?? [];
        pending = null;
        for (const e of live) send(e);
      });
  }
}

function write(res: ServerResponse, text: string): void {
  if (res.writableEnded || res.destroyed) return;
  if (res.writableLength > MAX_BUFFERED_BYTES) {
    res.destroy(); // a client that stopped reading; it reconnects and refetches
    return;
  }
  res.write(text);
}
