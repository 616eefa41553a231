// POST /api/agents/{agentId}/runs/trigger-and-download (spec 4.3): start a run whose answer is a file and stream
// the runtime's bytes to the caller, never buffering or storing them.
//
// - The window (8.3) bounds the start of streaming: until the first byte arrives the run stays `queued`, and a
//   miss is 504 with the run failed (decisions.md: no 202 here). The first byte is awaited before any header is
//   sent, so an empty answer is still a clean 502.
// - The run becomes `running` when the first byte arrives, and `completed` once the response has finished
//   flushing to the caller (duration and completed_at cover generation and transfer).
// - A caller that hangs up mid-stream fails the run and aborts the runtime call; so does the runtime breaking
//   off, and a caller that stops reading for ARS_DOWNLOAD_STALL_MS. A run failed or cancelled elsewhere (an admin
//   cancel, the running timeout, on any instance) ends the call too. A run a callback marks completed is still
//   streamed: the caller is owed the file, and the first terminal write stands (the file metadata is then not
//   recorded over it).
import type { ServerResponse } from 'node:http';
import type { Readable } from 'node:stream';
import type { AppContext } from '../context.ts';
import { findRun, type RunHead } from '../runs/runs-repo.ts';
import { transition, type RunPatch } from '../runs/run-transitions.ts';
import type { RunStatus } from '../runs/run-states.ts';
import { isOverLimit, type OverLimit } from '../rate-limits/rate-guard.ts';
import { errors } from '../errors.ts';
import { beginRun } from '../runs/begin-run.ts';
import type { WaitRequest } from './trigger-and-wait.ts';
import { invokeFailureReason, noteUnrecordedExternalId, prepareRun, type StartRunArgs } from '../runs/start-run.ts';
import { waitWindowMs } from './wait-window.ts';
import { downloadHeaders, outputsHeader } from './download-headers.ts';
import { firstChunk, jsonReason } from './stream-start.ts';
import { errorText } from '../runs/run-view.ts';
import { watchWriteStall } from './write-stall.ts';
import type { KeyTaken } from '../runs/idempotency.ts';

export type DownloadOutcome =
  | {
      kind: 'stream';
      run: RunHead;
      headers: Record<string, string>;
      /** The runtime's bytes. Send it as the response body: its pipe writes them straight into the response. */
      body: Readable;
      /** Call with the response before sending: records the run's end when the response closes. */
      track(res: ServerResponse): Promise<RunHead | null>;
    }
  /** The run is failed; `code` says which answer (500 runtime_failed, 502 run_failed, 504 runtime_timeout). */
  | { kind: 'failed'; code: 'runtime_failed' | 'run_failed' | 'runtime_timeout'; run: RunHead; message: string }
  | { kind: 'caller_gone'; run: RunHead }
  /** The request is over its rate limit: no run was created. */
  | OverLimit;

/**
 * Spec 4.3 and zones.md `runs/download`, through the one start pipeline. As a wait's request, except that the
 * window bounds the wait for the first byte, and a caller who leaves fails the run and aborts the runtime call.
 */
export function triggerAndDownload(ctx: AppContext, front: 'download' | 'zone_download', req: WaitRequest): Promise<DownloadOutcome | KeyTaken> {
  const windowMs = waitWindowMs({ timeoutMs: req.timeoutMs, runningTimeoutMs: req.agent.running_timeout_ms });
  return beginRun(ctx, front, req, (args) => startDownload(ctx, args, { windowMs, callerGone: req.callerGone }));
}

export interface DownloadWindow {
  windowMs: number;
  callerGone?: AbortSignal;
}

/** The streaming start: the run is inserted, its runtime called, and its first byte awaited within the window. */
async function startDownload(ctx: AppContext, args: StartRunArgs, opts: DownloadWindow): Promise<DownloadOutcome> {
  const { agent } = args;
  const deadline = Date.now() + opts.windowMs;
  // Checked before a run exists: only runtimes that answer a held call can stream (task runtimes → 422).
  const runtime = agent.runtime_id === null ? null : await ctx.agents.runtime(agent.runtime_id);
  if (runtime && !ctx.runtimes.get(runtime.kind).supportsSyncInvoke) {
    throw errors.agentUnavailable('the agent\'s runtime cannot stream a file (task runtimes return values, not files)');
  }
  const prepared = await prepareRun(ctx, args);
  if (isOverLimit(prepared)) return prepared;
  const { run } = prepared;
  // Failed or cancelled by someone else (this or another instance): the call has no one left to serve.
  const endedElsewhere = new AbortController();
  const stopWatching = ctx.runWatch.watch(run.id, (status) => {
    if (status === 'failed' || status === 'cancelled') endedElsewhere.abort();
  });
  // Until the download's end is recorded, this instance holds the run's call (a crash leaves it to recovery).
  const releaseLease = ctx.leases.hold(run.id);
  const unwatch = (): void => {
    stopWatching();
    releaseLease();
  };
  const window = new AbortController();
  const timer = setTimeout(() => window.abort(), Math.max(0, deadline - Date.now()));
  const signals = [endedElsewhere.signal, window.signal, ...(opts.callerGone ? [opts.callerGone] : [])];
  const starting = AbortSignal.any(signals);
  const endEarly = async (body: Readable | null, fallback: { code: 'runtime_failed' | 'run_failed'; why: string }): Promise<DownloadOutcome> => {
    clearTimeout(timer);
    body?.destroy();
    unwatch();
    if (opts.callerGone?.aborted) return { kind: 'caller_gone', run: await fail(ctx, run, 'client disconnected before the download began') };
    if (endedElsewhere.signal.aborted) return ended(ctx, run);
    if (window.signal.aborted) {
      const failed = await fail(ctx, run, 'the runtime did not begin streaming within the wait window');
      return { kind: 'failed', code: 'runtime_timeout', run: failed, message: 'the runtime did not respond within the wait window' };
    }
    return { kind: 'failed', code: fallback.code, run: await fail(ctx, run, fallback.why), message: fallback.why };
  };

  let upstreamBody: Readable | null = null;
  try {
    const res = await prepared.adapter.invokeStream({ runtime: prepared.runtime, target: agent.target ?? '', payload: prepared.payload, signal: starting });
    if (!res.ok) return await endEarly(null, { code: 'runtime_failed', why: invokeFailureReason(res.failure) });
    const upstream = res.value;
    upstreamBody = upstream.body;
    // What went wrong is read from `body.errored` (and by whoever reads the body meanwhile); an error between
    // those readers must not be an unhandled 'error' event.
    upstream.body.on('error', () => undefined);
    if (upstream.status < 200 || upstream.status >= 300 || upstream.isJson) {
      const why = await jsonReason(upstream, Math.min(2_000, Math.max(0, deadline - Date.now())));
      return await endEarly(upstream.body, { code: 'run_failed', why });
    }
    const first = await firstChunk(upstream.body, starting);
    if (first.kind === 'end') return await endEarly(upstream.body, { code: 'run_failed', why: `the runtime answered HTTP ${upstream.status} with an empty body instead of a file` });
    if (first.kind === 'error') return await endEarly(upstream.body, { code: 'runtime_failed', why: 'the runtime broke off before sending any byte of the file' });
    if (first.kind === 'aborted') return await endEarly(upstream.body, { code: 'runtime_failed', why: 'aborted' });
    clearTimeout(timer);

    // Streaming starts: the run is running (spec 4.3). A run failed or cancelled meanwhile is not streamed.
    const started = await transition(ctx.db, run.id, 'started', 'running', ctx.clock.now(), { externalRunId: upstream.externalRunId ?? null }, { via: 'sync' });
    ctx.metrics.transitioned('sync', started);
    if (started.kind === 'applied') {
      ctx.runWatch.publishRun(started.run);
      noteUnrecordedExternalId(ctx, started.run, upstream.externalRunId);
    }
    const current = started.kind === 'not_found' ? run : started.run;
    if (current.status === 'failed' || current.status === 'cancelled') {
      upstream.body.destroy();
      unwatch();
      return await ended(ctx, run);
    }

    const meta = downloadHeaders(run.id, upstream.headers);
    const outputs = outputsHeader(upstream.headers['x-outputs']);
    // The body is sent as it is: its pipe writes each chunk straight into the response and counts it (no stream
    // stage in between, decisions.md "Download path"). Its errors surface through `body.errored` and the response
    // closing early.
    const body = upstream.body;
    // A cancel or the running timeout cuts the transfer; whoever wrote that status wrote why.
    const onEnded = (): void => void body.destroy(new Error('the run ended elsewhere'));
    endedElsewhere.signal.addEventListener('abort', onEnded, { once: true });

    const track = (resp: ServerResponse): Promise<RunHead | null> =>
      new Promise((resolve) => {
        // A client that stops reading is cut after ARS_DOWNLOAD_STALL_MS (sync/write-stall.ts).
        let stalled = false;
        const stall = watchWriteStall(resp, ctx.config.downloadStallMs, () => {
          stalled = true;
          resp.destroy();
        });
        resp.once('close', () => {
          stall.stop();
          endedElsewhere.signal.removeEventListener('abort', onEnded);
          unwatch();
          const bytes = body.received;
          const brokeOff = body.errored !== null;
          const flushed = resp.writableFinished && !brokeOff;
          if (!flushed) body.destroy(); // the runtime's answer (and its socket) closes with the caller's
          const record = flushed
            ? finish(ctx, run, 'completed', {
                outputData: { kind: 'file_download', filename: meta.filename, mimeType: meta.mimeType, sizeBytes: bytes },
                outputs,
              })
            : endedElsewhere.signal.aborted
              ? findRun(ctx.db, run.id).then((row) => row ?? run) // someone else ended the run and wrote why
              : fail(ctx, run, stalled
                  ? `client stopped reading: nothing was taken for ${ctx.config.downloadStallMs / 1000} s, after ${bytes} bytes`
                  : brokeOff
                    ? `the runtime broke off the download after ${bytes} bytes`
                    : `client disconnected during download after ${bytes} bytes`);
          record.then(resolve, (err: unknown) => {
            ctx.log.error({ err, runId: run.id }, 'could not record the end of a download');
            resolve(null);
          });
        });
      });

    return { kind: 'stream', run: current, headers: meta.headers, body, track };
  } catch (err) {
    // A write failed part-way (the database is down): nothing may stay open behind the 500 — not the runtime's
    // answer, not the window's timer, not the run watch listener.
    clearTimeout(timer);
    upstreamBody?.destroy();
    unwatch();
    throw err;
  }
}

/** The run was failed or cancelled elsewhere before streaming began: spec 4.3's 502 with that status. */
async function ended(ctx: AppContext, run: RunHead): Promise<DownloadOutcome> {
  const row = await findRun(ctx.db, run.id);
  if (!row) return { kind: 'failed', code: 'run_failed', run, message: 'the run ended elsewhere' };
  const why = errorText(row.error);
  return { kind: 'failed', code: 'run_failed', run: row, message: `the run was ${row.status}${why ? `: ${why}` : ''}` };
}

function fail(ctx: AppContext, run: RunHead, reason: string): Promise<RunHead> {
  ctx.log.warn({ runId: run.id, reason }, 'download run failed');
  return finish(ctx, run, 'failed', { error: reason }); // the write makes a runtime's U+0000 storable
}

/** One terminal write; duration covers generation and transfer, from the run's creation (spec 4.3). */
async function finish(ctx: AppContext, run: RunHead, to: Extract<RunStatus, 'completed' | 'failed'>, patch: RunPatch): Promise<RunHead> {
  const now = ctx.clock.now();
  const durationMs = Math.max(0, now.getTime() - new Date(run.created_at).getTime());
  const result = await transition(ctx.db, run.id, 'terminal', to, now, { ...patch, durationMs, completedAt: now }, { via: 'sync' });
  if (result.kind === 'applied') ctx.runWatch.publishRun(result.run);
  ctx.metrics.transitioned('sync', result);
  return result.kind === 'not_found' ? run : result.run;
}
