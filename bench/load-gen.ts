// Child process: the load generator, a separate process on loopback so the service and its client never share an
// event loop. Written on undici (already a dependency, and Node's fastest HTTP client) rather than autocannon,
// because besides fixed-duration throughput it must spread requests over thousands of agents, hold thousands of
// requests open, time a wake-up from one request to another, and stream 1 GiB downloads — one small client
// for all of them, with the same code path for the service and its baseline.
import { setMaxListeners } from 'node:events';
import { Agent, Pool, type Dispatcher } from 'undici';
import { serveParent } from './ipc.ts';
import { Samples, summarize } from './stats.ts';
import type { ReqSpec, ThroughputJob, ThroughputResult, WakeItem, WakeResult } from './types.ts';

const held = { controller: new AbortController(), pending: [] as Array<Promise<string>> };
/** One signal ends every held request, so it has thousands of listeners on purpose. */
function newHoldSignal(): void {
  held.controller = new AbortController();
  setMaxListeners(0, held.controller.signal);
  held.pending = [];
}
const longAgent = new Agent({ headersTimeout: 0, bodyTimeout: 0, connect: { timeout: 120_000 }, keepAliveTimeout: 60_000 });

function send(d: Dispatcher, origin: string, spec: ReqSpec, signal?: AbortSignal) {
  return d.request({ origin, path: spec.path, method: spec.method, headers: spec.headers, body: spec.body, signal });
}

async function throughput(job: ThroughputJob): Promise<ThroughputResult> {
  const pool = new Pool(job.origin, { connections: job.connections, pipelining: 1, keepAliveTimeout: 60_000 });
  const samples = new Samples();
  const statuses: Record<string, number> = {};
  let next = 0;
  const t0 = performance.now();
  const from = t0 + job.warmupMs;
  const end = from + job.durationMs;
  let cpuAtFrom: NodeJS.CpuUsage | null = null;
  const cpuTimer = setTimeout(() => (cpuAtFrom = process.cpuUsage()), job.warmupMs);
  const worker = async (): Promise<void> => {
    for (;;) {
      const start = performance.now();
      if (start >= end && (next >= (job.atLeast ?? 0) || start >= end + 60_000)) return;
      const spec = job.requests[next++ % job.requests.length]!;
      let code: string;
      try {
        const res = await send(pool, job.origin, spec);
        await res.body.text();
        code = String(res.statusCode);
      } catch {
        code = 'error';
      }
      const done = performance.now();
      if (start >= from && done <= end) {
        samples.push(done - start);
        statuses[code] = (statuses[code] ?? 0) + 1;
      }
    }
  };
  await Promise.all(Array.from({ length: job.connections }, worker));
  clearTimeout(cpuTimer);
  const cpu = process.cpuUsage(cpuAtFrom ?? undefined);
  await pool.close();
  return {
    requests: samples.length,
    rps: samples.length / (job.durationMs / 1000),
    latency: summarize(samples.values()),
    statuses,
    clientCpu: (cpu.user + cpu.system) / 1000 / job.durationMs,
    samples: samples.values(),
  };
}

/** Sequential requests alternating A and B (so drift hits both), timed one by one. */
async function sequentialAB(job: { a: { origin: string; requests: ReqSpec[] }; b: { origin: string; requests: ReqSpec[] }; warmup: number; n: number }) {
  const agent = new Agent({ keepAliveTimeout: 60_000 });
  const a = new Samples();
  const b = new Samples();
  const statuses: Record<string, number> = {};
  const once = async (side: { origin: string; requests: ReqSpec[] }, k: number, into: Samples | null, tag: string) => {
    const t = performance.now();
    const res = await send(agent, side.origin, side.requests[k % side.requests.length]!);
    await res.body.text();
    const dt = performance.now() - t;
    if (into) {
      into.push(dt);
      statuses[`${tag} ${res.statusCode}`] = (statuses[`${tag} ${res.statusCode}`] ?? 0) + 1;
    }
  };
  for (let k = 0; k < job.warmup + job.n; k++) {
    const measured = k >= job.warmup;
    // Alternate which goes first, so neither always follows the other.
    if (k % 2 === 0) {
      await once(job.a, k, measured ? a : null, 'a');
      await once(job.b, k, measured ? b : null, 'b');
    } else {
      await once(job.b, k, measured ? b : null, 'b');
      await once(job.a, k, measured ? a : null, 'a');
    }
  }
  await agent.close();
  return { a: summarize(a.values()), b: summarize(b.values()), statuses };
}

async function download(job: { origin: string; req: ReqSpec }) {
  const agent = new Agent({ bodyTimeout: 120_000, headersTimeout: 120_000 });
  const t = performance.now();
  const res = await send(agent, job.origin, job.req);
  let bytes = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) bytes += chunk.length;
  const elapsed = performance.now() - t;
  await agent.close();
  return { status: res.statusCode, bytes, ms: elapsed, contentType: String(res.headers['content-type'] ?? '') };
}

/**
 * Opens `holds` at a steady 1,000 per second: a burst of thousands of SYNs overflows the accept queue of a busy
 * server, and the retransmission backoff that follows would look like the service refusing connections.
 */
async function openHolds(origin: string, holds: ReqSpec[], onAnswer: (status: number, body: string, at: number) => void): Promise<void> {
  const signal = held.controller.signal;
  for (let i = 0; i < holds.length; i++) {
    const p = send(longAgent, origin, holds[i]!, signal).then(
      async (res) => {
        const body = await res.body.text();
        onAnswer(res.statusCode, body, performance.now());
        return String(res.statusCode);
      },
      () => 'aborted',
    );
    held.pending.push(p);
    if (i % 50 === 49) await new Promise((r) => setTimeout(r, 50));
  }
}

const parent = serveParent({
  throughput,
  sequentialAB,
  download,

  /** Opens held requests and returns once all are sent; `release` ends them. */
  async hold(job: { origin: string; holds: ReqSpec[] }): Promise<{ dispatched: number }> {
    newHoldSignal();
    await openHolds(job.origin, job.holds, () => {});
    return { dispatched: job.holds.length };
  },

  async release(): Promise<Record<string, number>> {
    held.controller.abort();
    const outcomes = await Promise.all(held.pending);
    held.pending = [];
    const counts: Record<string, number> = {};
    for (const o of outcomes) counts[o] = (counts[o] ?? 0) + 1;
    return counts;
  },

  /**
   * Holds every request of `holds`, asks the orchestrator for the wake plan once they are all held, then for each
   * item in turn sends its wake request and times until the held answer carrying its key has been read.
   */
  async wake(job: { origin: string; holds: ReqSpec[]; keyField: string }): Promise<WakeResult> {
    newHoldSignal();
    const arrivals = new Map<string, { at: number; resolve: (at: number) => void; promise: Promise<number> }>();
    const slot = (key: string) => {
      let s = arrivals.get(key);
      if (!s) {
        let resolve!: (at: number) => void;
        const promise = new Promise<number>((r) => (resolve = r));
        s = { at: NaN, resolve, promise };
        arrivals.set(key, s);
      }
      return s;
    };
    const failures: Record<string, number> = {};
    await openHolds(job.origin, job.holds, (status, body, at) => {
      let key: string | undefined;
      try {
        key = String((JSON.parse(body) as Record<string, unknown>)[job.keyField]);
      } catch {
        key = undefined;
      }
      if (status !== 200 || key === undefined) failures[`held answered ${status}`] = (failures[`held answered ${status}`] ?? 0) + 1;
      if (key !== undefined) {
        const s = slot(key);
        s.at = at;
        s.resolve(at);
      }
    });
    const plan = await parent.call<{ origin: string; items: WakeItem[] }>('wakePlan', { dispatched: job.holds.length });
    const wakeAgent = new Agent({ keepAliveTimeout: 60_000 });
    const samples = new Samples();
    const starts = new Samples();
    let early = 0;
    let late = 0;
    for (const item of plan.items) {
      if (item.prepare) await parent.call('prepare', item.key);
      const s = slot(item.key);
      if (!Number.isNaN(s.at)) {
        early++; // answered before its wake-up was sent (a poll or timeout got there first): not a wake-up
        continue;
      }
      const t0 = performance.now();
      const res = await send(wakeAgent, plan.origin, item.wake);
      await res.body.text();
      if (res.statusCode !== 200) failures[`wake answered ${res.statusCode}`] = (failures[`wake answered ${res.statusCode}`] ?? 0) + 1;
      const at = await Promise.race([s.promise, new Promise<number>((r) => setTimeout(() => r(NaN), 10_000))]);
      if (Number.isNaN(at)) late++;
      else {
        samples.push(at - t0);
        starts.push(performance.timeOrigin + t0);
      }
    }
    await wakeAgent.close();
    held.controller.abort();
    await Promise.all(held.pending);
    held.pending = [];
    return { latency: summarize(samples.values()), samples: samples.values(), starts: starts.values(), woken: samples.length, early, late, failures };
  },
});
