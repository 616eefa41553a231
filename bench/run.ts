// `npm run bench`: starts the service (and its baselines) in a child process on PGlite, or on PostgreSQL when
// BENCH_DATABASE_URL is set, the runtime fakes in another and the load generator in a third; runs each scenario;
// prints every figure beside its baseline with the target and PASS/MISS; writes docs/benchmarks.md.
// A benchmark, not a test: it exits 0 whether figures pass or miss, and non-zero only if it could not run.
import os from 'node:os';
import { format } from 'node:util';
import { startHarness, SEED, type Harness } from './harness.ts';
import { machine, Report, writeMarkdown } from './report.ts';
import { TIMING } from './scenarios/compare.ts';
import { callbackThroughput, rateLimitedThroughput, traceContextThroughput, triggerThroughput } from './scenarios/throughput.ts';
import { callbackToWake, syncWaitAddedLatency } from './scenarios/sync-wait.ts';
import { DOWNLOAD_ROUNDS, downloadThroughput } from './scenarios/download.ts';
import { heldWaitMemory } from './scenarios/held-memory.ts';
import { KEYED, scale, SCALE, SCALE_RUNS } from './scenarios/scale/index.ts';
import { RETENTION_RUNS, triggerDuringRetention } from './scenarios/retention.ts';

const output: string[] = [];
const log = console.log.bind(console);
console.log = (...args: unknown[]) => {
  const line = format(...args);
  output.push(line);
  log(line);
};

const scenarios: Array<[string, (h: Harness, r: Report) => Promise<void>]> = [
  ['/trigger throughput', triggerThroughput],
  ['/callback throughput', callbackThroughput],
  ['429 throughput', rateLimitedThroughput],
  ['trigger-and-wait added latency', syncWaitAddedLatency],
  ['callback-to-wake latency', callbackToWake],
  ['trigger-and-download', downloadThroughput],
  [`scale: ${SCALE_RUNS.toLocaleString('en-US')} runs`, scale], // its own database, seeded once and kept (PostgreSQL only)
  // After the other throughput figures: it leaves the runs /trigger created, and a million fewer.
  [`/trigger during run retention: ${RETENTION_RUNS.toLocaleString('en-US')} runs`, triggerDuringRetention],
  // Last: if the service kept waits whose callers hung up, they would linger into later scenarios.
  ['memory per held wait', heldWaitMemory],
  // After every other figure: the first request that carries a context turns Node 22's async-context tracking on.
  ['traceparent cost', traceContextThroughput],
];

const METHOD = [
  'Processes: the service host (createContext + buildApp from src/, pino at LOG_LEVEL info writing to a discarded stdout, no background work), the runtime fakes (test/fakes) and the load generator each run in their own process on 127.0.0.1. The baselines are hand-written Fastify routes (no logger, schema or metrics; for /trigger and /callback the key check and rate count the spec requires, see below) in the service host, on the same database handle and against the same fakes.',
  'Database: PostgreSQL when BENCH_DATABASE_URL is set (a fresh database per run, dropped at the end; a second service host on it for the cross-instance wake-up), else PGlite in memory inside the service host (BENCH_PGLITE=disk puts it in a temp dir as `npm start` does; its synchronous WAL writes then dominate every figure).',
  `Load generator: a small undici client (bench/load-gen.ts) rather than autocannon, because it also has to hold thousands of requests, time wake-ups across requests and stream 1 GiB; same code path for service and baseline. Throughput: ${TIMING.connections} keep-alive connections, ${TIMING.preWarmMs / 1000} s unmeasured warm-up per side (longer if needed to send every request of the list once: a long-running instance has seen every agent), then ${TIMING.slices} alternating ${TIMING.sliceMs / 1000} s windows per side (each after a ${TIMING.warmupMs / 1000} s settle; every other round in reverse order, so neither side always runs first); a figure counts only if ≥ 99% of the service's answers have the endpoint's status. The cost lines give the service host's CPU per request and, when PostgreSQL runs on this machine, the server's (every postgres process, from /proc), measured over the same windows.`,
  `Seed: one organization, one Trigger.dev fake runtime and one n8n fake runtime; ${SEED.task.toLocaleString('en-US')} + ${SEED.progress.toLocaleString('en-US')} (/callback's) + ${SEED.wake.toLocaleString('en-US')} (the wake's) Trigger.dev agents, ${SEED.workflow} n8n agents, ${SEED.download} download agents, inserted through SQL as test/helpers/fixtures.ts does. Requests are spread round-robin so no agent passes its per-minute limit.`,
  '/trigger: the baseline route checks the ingest key (SHA-256 digest, the agent cached per digest after its first read), then does one INSERT into runs carrying the per-agent rate count (spec 8.1: an upsert into rate_limit_buckets as a CTE of the INSERT), one POST to the same Trigger.dev fake (same body shape, idempotency key included), one UPDATE. /callback: `output` intermediate updates on one running run per agent; the baseline checks the agent key the same way and does one guarded UPDATE carrying the rate count. The figure counts only if the baseline answered 201/200 too. The bare routes (the same writes without the key check and the rate count) are measured in the same alternating windows and printed as INFO. 429s: one agent already over its 20/min, against a bare route answering {hello:"world"} to the same request.',
  'trigger-and-wait added latency: sequential calls on n8n agents whose workflow answers at once, alternating with the same client calling the n8n fake directly; added = service percentile − direct percentile.',
  'callback-to-wake: 1,000 trigger-and-wait calls held on Trigger.dev agents (one per agent); then, one at a time, the fake run is completed (the task returns) and its `output complete:true` callback is sent; latency = callback sent → held answer read. An unmeasured warm-up round, then three rounds of 1,000 per side (service, baseline, same-work route), fresh agents each round, the order of the sides turning each round; each percentile is over the side\'s 3,000 measured samples. Other instance: the waits are held on a second service host, the callbacks go to the first, the wake-up travels through PostgreSQL NOTIFY. Baseline: a bare route answering a held request when another request names it (locally, or through pg_notify/LISTEN). The p99 passes within its absolute ceiling and within 2× the baseline p99 (issue 15). Beside it (INFO), a hand-written route doing the same work: the task run started and its caller held (/trigger-and-hold), the completion written by the callback\'s work (key, rate count, one guarded UPDATE committed before anyone is told, with its pg_notify across instances), the caller answered with the return value read from the runtime (started beside the write on the same instance). Each side\'s garbage collection is counted too: every V8 pause in the service hosts involved (PerformanceObserver), scavenges and full-collection pauses apart, while its rounds woke their waits, and how many of its samples at or above its p99 overlapped one (both on the machine\'s clock).',
  `trigger-and-download: a 1 GiB file generated by the n8n fake (64 KiB chunks, content-length set), read whole by the same client directly (INFO), through the service, through the best hand-written Node proxy in the service host (the baseline: undici \`dispatch\` writing each chunk straight into the Node response, pausing the upstream until the response drains) and through a bare Fastify proxy route (INFO: undici \`request\` and a stream reply); ${DOWNLOAD_ROUNDS} rounds, the service and the dispatch proxy back to back in alternating order; throughput = bytes ÷ time over all rounds (target ≥ 90% of the dispatch proxy), host CPU per GiB = the service host process CPU over each download (target ≤ 1.15× the dispatch proxy's); RSS growth = peak RSS (sampled every 10 ms) − RSS after a 64 MiB warm-up and a forced GC; machine CPU = busy time of all cores (os.cpus(): every process and the kernel) over each timed download.`,
  'Memory per held wait: the service host runs with --expose-gc; after a warm-up round of 500 waits, memory is read after three forced full collections before and while 10,000 trigger-and-wait calls on Trigger.dev agents are held (a task runtime holds no outbound socket per wait; 10,000 n8n waits would also hold 10,000 outbound sockets and pass this machine\'s 20,000-descriptor limit). Per wait = delta / waits held. Baseline: the same number of requests held open by a bare route. BENCH_HEAP_PROF=<dir> writes a sampling heap profile of what the held waits keep alive.',
  `Scale (PostgreSQL only; issue 15): a database of its own, ars_bench_scale_<BENCH_SCALE_RUNS, default 10M> on BENCH_DATABASE_URL's (else TEST_DATABASE_URL's) server, seeded once through SQL and kept (generate_series in batches of up to 1M runs, one transaction each, recorded in bench_scale_seed so an interrupted seed resumes; then VACUUM ANALYZE, also recorded): ${SCALE.orgs} organizations with a Trigger.dev and an n8n runtime each, ${SCALE.agents.toLocaleString('en-US')} platform agents (every ${SCALE.n8nEvery}th on n8n), ${SCALE_RUNS.toLocaleString('en-US')} runs over ${SCALE.days} days in creation order on a skewed draw of agents (the busiest ~2%), 88% completed with a ~1 KB output_data, 8% failed with a ~300 B error, 4% cancelled, the seed's last hour partly queued/running/waiting, inputs ~300 B. Beside it, an empty database of the same run with the same agents and no runs (dropped at the end). On each: createContext + buildApp in the orchestrator (app.inject, no network; pino at info to a discarded stream), the runtimes pointed at this run's fakes, the ${KEYED} busiest Trigger.dev agents given fresh keys; nothing left due for polling by earlier runs, one timeout sweep, then ANALYZE runs (as autovacuum would: earlier runs leave runs in flight); the scale database also gets the daily index vacuum of runs first (VACUUM (INDEX_CLEANUP ON), background/runs-vacuum.ts), as if it had run at most a day ago, so the writes that follow stand for the day's. /trigger and /callback: one unmeasured block per side, then 10 rounds of one block per side back to back (order alternating), each block one request per keyed agent, 8 at a time; ratio = the median of the rounds' requests/s at scale ÷ on the empty database, target ≥ 91% (within 10%); the requests/s shown are over all blocks. Sweeps: two unmeasured rounds (the new empty database runs its first passes about a fifth cheaper than its steady state), then 11 rounds, each one pass per side back to back (order alternating); before each, 2,000 runs spread over the Trigger.dev agents become due (timeout: running, started 3 h ago on agents with the default 2 h timeout; poll: running with next_poll_at a minute ago and a run at the Trigger.dev fake, every other one COMPLETED with a ~1 KB output, the rest EXECUTING); the empty database is ANALYZEd before each of its passes (untimed; autovacuum would, past 50 changed rows + 10%) and the scale one is not (it would only past 10% of its runs); the pass is the background job's own function (sweepTimeouts, pollDueRuns) timed whole; cost per due run = pass time ÷ 2,000, median pass per side; ratio = median of the rounds' scale ÷ empty, target ≤ 110%. Runs list and dashboard (the former "console at 1M runs" figures): 10 unmeasured then 100 sequential requests through the whole app (fewer, at least 20, if a figure passes 60 s: it then says how many), alternating with the bare SQL the runs page needs (SELECT * … ORDER BY id DESC LIMIT 51) or, for the dashboard, the same aggregate read from runs alone (every 5th iteration), a minute after the writes above, once runs has been vacuumed (VACUUM ANALYZE, untimed, as autovacuum would past its 10,000 changes, migration 0015) and the rollup refreshed (as the background sweep, every minute, would); the dashboard is asked for the default 30 days up to now, for 90 days up to now, and for 30 days of one organization; PASS when p95 < 100 ms. Sizes: pg_total_relation_size per table (heap, TOAST, indexes) and each runs index.`,
  `Run retention (issue 39 item 4): ${RETENTION_RUNS.toLocaleString('en-US')} (BENCH_RETENTION_RUNS) completed runs created 400 to 370 days ago on the Trigger.dev agents, each with a ~300 B input, a ~1 KB output and its timeline entry, inserted through SQL in transactions of 100,000, then ANALYZE runs and run_transitions (as autovacuum would) and the dashboard rollup built (retention deletes only runs it holds); the service host has ARS_RUN_RETENTION_DAYS=30. /trigger as in its own figure, in alternating windows: on one side the retention job's run deletion runs in the service host for the whole window, warm-up included: its own pass function (batches of 500 runs, each followed by a pause as long as it took) in passes of one batch back to back, as a backlog keeps it busy; on the other nothing is deleted. Ratio = deleting ÷ not deleting, target ≥ 90%. Then the rest of the backlog is deleted alone and timed.`,
  'traceparent cost (issue 39 item 2): /trigger on the same service with a W3C traceparent on every request (a trace id per agent) and without one, in alternating windows as above, no OTLP exporter configured; target ≥ 90%. Measured after every other figure, because the first request that carries a context turns Node 22\'s async-context tracking on for the rest of the process. The untraced requests are the /trigger figure\'s own path: with no exporter and no traceparent, no context is entered and no span made.',
  'Cost breakdown: the service host wraps its Db and runtime adapters (bench/profiled.ts) to count statements and time invoke(); CPU per request is the host process CPU over the window divided by the requests it handled. BENCH_CPU_PROF=<dir> adds a profiled service window and a profiled baseline window per throughput scenario, and one untimed 1 GiB download per host side (service, undici dispatch, Fastify proxy) after the timed ones.',
];

async function main(): Promise<void> {
  const startedAt = new Date();
  const databaseUrl = process.env.BENCH_DATABASE_URL || null;
  const logLevel = process.env.BENCH_LOG_LEVEL || 'info';
  console.log(`agent run service benchmark — ${startedAt.toISOString()}`);
  const pgliteOnDisk = process.env.BENCH_PGLITE === 'disk';
  const h = await startHarness({ databaseUrl, pgliteOnDisk, logLevel });
  const m = machine(h.dbLabel);
  m['Load average'] = `${os.loadavg()[0]!.toFixed(1)} (1 min) at start on ${os.cpus().length} cores — other work on the machine shares them`;
  for (const [k, v] of Object.entries(m)) console.log(`${k.padEnd(9)} ${v}`);
  console.log('');
  const report = new Report();
  try {
    // BENCH_ONLY=<parts of scenario names, comma-separated> runs a subset (while working on some figures).
    const only = process.env.BENCH_ONLY?.split(',').filter(Boolean);
    for (const [name, run] of scenarios) {
      if (only && !only.some((part) => name.includes(part))) continue;
      try {
        await run(h, report);
      } catch (err) {
        report.add({ name, verdict: 'ERROR', service: err instanceof Error ? err.message.split('\n')[0]! : String(err) });
        console.error(err);
      }
    }
  } finally {
    await h.close();
  }
  const seconds = (Date.now() - startedAt.getTime()) / 1000;
  m['Load average'] += `; ${os.loadavg()[0]!.toFixed(1)} at the end`;
  console.log(`\ndone in ${seconds.toFixed(0)} s`);
  if (process.env.BENCH_ONLY) log('BENCH_ONLY set: docs/benchmarks.md left as it was (it holds full runs only)');
  else log(`wrote ${await writeMarkdown(report, m, { startedAt, seconds, method: METHOD, output: output.join('\n') })}`);
  // Misses are results, not failures; an ERROR row means the bench itself could not measure something.
  if (report.figures.some((f) => f.verdict === 'ERROR')) process.exitCode = 1;
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
