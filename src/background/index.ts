// Background work: sweepers that re-arm themselves with a jittered timeout and are awaited on shutdown
// (house style: graphile/worker). Each job is thin and calls the same services the routes call.
import type { AppContext } from '../context.ts';
import { Sweeper } from '../lib/sweeper.ts';
import { deleteOldBuckets } from '../rate-limits/rate-limiter.ts';
import { OutboxWorker } from '../events/outbox-worker.ts';
import { pollDueRuns } from './poller.ts';
import { sweepTimeouts } from './timeout-sweeper.ts';
import { recoverLostRuns } from '../runs/recover-run.ts';
import { pruneExpired } from './retention.ts';
import { refreshRollup } from '../runs/run-rollup.ts';
import { vacuumRunsIfDue } from './runs-vacuum.ts';

/** Retention is measured in days: a pass every 10 minutes keeps each one small. */
const RETENTION_EVERY_MS = 600_000;
/** The dashboard reads closed days changed since the last refresh from the runs table: refresh often. */
const ROLLUP_EVERY_MS = 60_000;
/** The runs vacuum is daily (runs-vacuum.ts); checking hourly starts it within an hour of being due. */
const RUNS_VACUUM_CHECK_EVERY_MS = 3_600_000;

export interface Background {
  /** Stops re-arming the sweepers and waits for running passes; held calls are the caller's (drain first). */
  stop(): Promise<void>;
}

export function startBackgroundWork(ctx: AppContext): Background {
  const every = ctx.config.sweepIntervalMs;
  const sweepers = [
    new Sweeper('rate-limit-cleanup', 60_000, () => deleteOldBuckets(ctx.db, ctx.clock.now()), ctx.log),
    new OutboxWorker(ctx), // webhook-action deliveries every ~1 s, nudged by run-status NOTIFYs
    new Sweeper('status-poll', every, () => pollDueRuns(ctx), ctx.log), // due runs at their agent's interval
    new Sweeper('run-timeouts', every, () => sweepTimeouts(ctx), ctx.log), // spec part 3 queued/running timeouts
    new Sweeper('run-recovery', every, () => recoverLostRuns(ctx), ctx.log), // runs whose runtime call an instance lost
    new Sweeper('retention', RETENTION_EVERY_MS, () => pruneExpired(ctx), ctx.log), // finished outbox rows, alert receipts, expired keys; opt-in: old runs, audit
    new Sweeper('dashboard-rollup', ROLLUP_EVERY_MS, () => refreshRollup(ctx.db, ctx.clock.now()), ctx.log), // closed days of the dashboard
    new Sweeper('runs-vacuum', RUNS_VACUUM_CHECK_EVERY_MS, () => vacuumRunsIfDue(ctx), ctx.log), // daily: keeps old days' pages all-visible
  ];
  for (const s of sweepers) s.start();
  return {
    stop: async () => {
      await Promise.all(sweepers.map((s) => s.stop()));
    },
  };
}
