// Background work: sweepers that re-arm themselves with a jittered timeout and are awaited on shutdown
// (house style: graphile/worker). Each job is thin and calls the same services the routes call.
import type { AppContext } from '../context.ts';
import { Sweeper } from './sweeper.ts';
import { deleteOldBuckets } from '../limits/rate-limiter.ts';

export interface Background {
  stop(): Promise<void>;
}

export function startBackgroundWork(ctx: AppContext): Background {
  const every = ctx.config.sweepIntervalMs;
  const sweepers = [
    new Sweeper('rate-limit-cleanup', 60_000, () => deleteOldBuckets(ctx.db, ctx.clock.now()), ctx.log),
  ];
  void every;
  for (const s of sweepers) s.start();
  return { stop: async () => void (await Promise.all(sweepers.map((s) => s.stop()))) };
}
