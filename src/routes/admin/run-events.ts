// Issue 14 "Runs update live": GET /runs/events, run status changes as server-sent events. One feed per app
// (admin/run-feed.ts) reads the changes; each stream here only filters and writes them. The console refetches
// the list when it (re)connects; `Last-Event-ID` or `?since=` replays the changes after that position, a few
// seconds early (at least once), or says `refetch` when there are too many to replay. The stream's first bytes
// (`retry:`) come once the subscription is live.
// A stream lasts only as long as its right to (issue 35): every RECHECK it signs its credential in again and reads
// the memberships again, so a sign-out, a revoked token, an expired session or a removal from the last organization
// ends it (`event: end`), and a role or membership change re-scopes it (`event: refetch`). Streams per user are
// bounded, and a user of no organization gets none.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import { ApiError, errors } from '../../errors.ts';
import { parseTimestamp, TIMESTAMP_RULE } from '../../lib/timestamps.ts';
import { OVERLAP_MS } from '../../admin/run-feed.ts';
import { runsChangedSince, type RunChange } from '../../runs/run-changes.ts';
import { rawAnswer } from '../../schemas/responses.ts';
import { visibleOrgIds, type Principal } from '../../orgs/principal.ts';
import { principalOf, signedInToAdmin } from '../../orgs/user-auth.ts';
import type { AppContext } from '../../context.ts';

/** Changes replayed on reconnect at most; beyond, the client is told to refetch. */
const REPLAY_LIMIT = 500;
/** A client this far behind (bytes unsent) is cut off rather than buffered for without end. */
const MAX_BUFFERED_BYTES = 1024 * 1024;

const EventsQuery = Type.Object({ since: Type.Optional(Type.String({ maxLength: 64 })) });

const EVENT_STREAM = rawAnswer(
  'Server-sent events: `event: run` with `data: {"runId","agentId","orgId","status","updated_at"}` and `id` (for Last-Event-ID) per status change, a `: ping` comment every 15 s, `event: refetch` when a reconnect missed too much to replay or the caller’s organizations changed, and `event: end` (then the stream closes) once the credential no longer signs in or sees no organization — checked every 5 s.',
  'text/event-stream',
  { type: 'string' },
);

export default async function runEventRoutes(base: FastifyInstance): Promise<void> {
  const app = base.withTypeProvider<TypeBoxTypeProvider>();
  const live = app.ctx.liveStreams;
  // Before the server stops: open streams would otherwise hold app.close() (and shutdown) until clients leave.
  app.addHook('preClose', () => live.close());

  const schema = {
    operationId: 'adminRunEvents',
    summary: 'Run status changes as they happen (server-sent events)',
    querystring: EventsQuery,
    response: { 200: EVENT_STREAM },
    errors: ['invalid_body', 'rate_limited', 'service_unavailable'] as const,
  };
  app.get('/runs/events', { schema }, async (req, reply) => {
    const since = replayFrom(req.query.since, req.headers['last-event-id']);
    const principal = req.principal!;
    if (!principal.platformAdmin && principal.roles.size === 0) throw new ApiError('forbidden', 'live runs need membership of an organization');
    const holder = principal.userId ?? 'admin';
    const { maxStreamsPerUser, recheckMs } = live.settings;
    const refusal = live.refusal(holder);
    if (refusal === 'per_user') {
      throw new ApiError('rate_limited', `at most ${maxStreamsPerUser} live streams per user; close one first`, { headers: { 'retry-after': String(Math.ceil(recheckMs / 1000)) } });
    }
    if (refusal === 'instance') throw errors.unavailable('service_unavailable', 'too many live streams on this instance');
    openStream(app.ctx, holder, req, reply, since);
  });
}

/** What the stream's credential allows now: null when it no longer signs in or sees no organization. */
async function currentRight(ctx: AppContext, req: FastifyRequest): Promise<Principal | null> {
  const who = await signedInToAdmin(ctx, req.headers.authorization, req.headers.cookie);
  if (!who) return null;
  const principal = await principalOf(ctx, who);
  return principal.platformAdmin || principal.roles.size > 0 ? principal : null;
}

function sameScope(a: string[] | null, b: string[] | null): boolean {
  if (a === null || b === null) return a === b;
  return a.length === b.length && a.every((id) => b.includes(id));
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

function openStream(ctx: AppContext, holder: string, req: FastifyRequest, reply: FastifyReply, since: Date | null): void {
  reply.hijack();
  const res = reply.raw;
  res.writeHead(200, {
    ...(reply.getHeaders() as Record<string, string>),
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-store',
    'x-accel-buffering': 'no', // nginx: pass each event on, do not buffer the response
    connection: 'keep-alive',
  });
  const { feed, remove } = ctx.liveStreams.add(holder, res);
  const { heartbeatMs, recheckMs } = ctx.liveStreams.settings;

  // Live events wait in `pending` until the replay is written, so the stream stays in updated_at order.
  let pending: RunChange[] | null = since ? [] : null;
  const send = (e: RunChange): void => {
    if (pending) pending.push(e);
    else write(res, `id: ${e.updated_at}/${e.runId}\nevent: run\ndata: ${JSON.stringify(e)}\n\n`);
  };
  let orgIds = visibleOrgIds(req.principal!);
  let unsubscribe = feed.subscribe({ orgIds }, send);
  // The first bytes say the subscription is live: a client that fetches the list after them misses no change.
  void feed.ready().then(() => write(res, 'retry: 2000\n\n'));
  const heartbeat = setInterval(() => write(res, ': ping\n\n'), heartbeatMs);
  heartbeat.unref();
  let checking = false;
  const recheck = setInterval(() => {
    if (checking || res.writableEnded) return;
    checking = true;
    currentRight(ctx, req)
      .then((principal) => {
        if (res.writableEnded) return;
        if (!principal) {
          // The EventSource then reconnects, is refused (401/403) and stops.
          write(res, 'event: end\ndata: {"reason":"the credential no longer allows this stream"}\n\n');
          res.end();
          return;
        }
        const now = visibleOrgIds(principal);
        if (sameScope(now, orgIds)) return;
        orgIds = now;
        unsubscribe();
        unsubscribe = feed.subscribe({ orgIds }, send);
        write(res, 'event: refetch\ndata: {}\n\n'); // the page's list may hold rows it no longer may see
      })
      // The database is away: the feed delivers nothing either; the next recheck decides.
      .catch((err: unknown) => req.log.warn({ err }, 'live runs: the stream could not be rechecked'))
      .finally(() => void (checking = false));
  }, recheckMs);
  recheck.unref();
  const done = (): void => {
    clearInterval(heartbeat);
    clearInterval(recheck);
    unsubscribe();
    remove();
  };
  res.on('close', done);
  req.raw.on('close', () => res.end());

  if (since) {
    runsChangedSince(ctx.db, new Date(since.getTime() - OVERLAP_MS), REPLAY_LIMIT, orgIds)
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
