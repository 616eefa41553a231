// The bound for the scale figures ("within 10% of its empty-database value"), and how they are read.
import { nearestRank } from '../../stats.ts';

export const MAX_RATIO = 1.1;

export function p50p95(values: number[]): { p50: number; p95: number } {
  const sorted = Float64Array.from(values).sort();
  return { p50: nearestRank(sorted, 0.5), p95: nearestRank(sorted, 0.95) };
}

export function pctOver(ratio: number): string {
  return `${((ratio - 1) * 100).toFixed(0)}%`;
}
