// Percentiles and formatting.
import type { LatencySummary } from './types.ts';

/** A growable array of latency samples (ms). */
export class Samples {
  #data = new Float64Array(1 << 14);
  #n = 0;

  push(v: number): void {
    if (this.#n === this.#data.length) {
      const bigger = new Float64Array(this.#data.length * 2);
      bigger.set(this.#data);
      this.#data = bigger;
    }
    this.#data[this.#n++] = v;
  }

  get length(): number {
    return this.#n;
  }

  values(): Float64Array {
    return this.#data.slice(0, this.#n);
  }
}

/** Several windows' or rounds' samples as one array, so percentiles are taken over all of them. */
export function concatSamples(parts: Float64Array[]): Float64Array {
  const all = new Float64Array(parts.reduce((n, x) => n + x.length, 0));
  let off = 0;
  for (const x of parts) {
    all.set(x, off);
    off += x.length;
  }
  return all;
}

/** Whether something that began at `at` and lasted `ms` (a GC pause) overlaps [from, to]; all in ms. */
export function overlaps(span: { at: number; ms: number }, from: number, to: number): boolean {
  return span.at <= to && span.at + span.ms >= from;
}

/**
 * The median: of an even count, the mean of the two middle values. (Taking the upper one, as the scale figures
 * did, read a 10-round ratio of 71–117% as 98% where the middle pair was 86% and 98%.)
 */
export function median(xs: number[]): number {
  const sorted = [...xs].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/** Adds each count of `from` to `into` (status codes, failure kinds). */
export function addCounts(into: Record<string, number>, from: Record<string, number>): void {
  for (const [k, v] of Object.entries(from)) into[k] = (into[k] ?? 0) + v;
}

/**
 * The nearest-rank percentile `q` (0–1) of values sorted ascending: the smallest value with at least q of them at or
 * below it; NaN of none.
 */
export function nearestRank(sorted: ArrayLike<number>, q: number): number {
  const n = sorted.length;
  return n === 0 ? NaN : sorted[Math.min(n - 1, Math.max(0, Math.ceil(q * n) - 1))]!;
}

export function summarize(values: Float64Array | number[]): LatencySummary {
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  if (n === 0) return { n: 0, p50: NaN, p90: NaN, p99: NaN, max: NaN, mean: NaN };
  let sum = 0;
  for (const v of sorted) sum += v;
  const at = (q: number) => nearestRank(sorted, q);
  return { n, p50: at(0.5), p90: at(0.9), p99: at(0.99), max: sorted[n - 1]!, mean: sum / n };
}

export const ms = (v: number, digits = 2): string => `${v.toFixed(digits)} ms`;
export const mib = (bytes: number, digits = 1): string => `${(bytes / 1024 / 1024).toFixed(digits)} MiB`;
export const kib = (bytes: number, digits = 1): string => `${(bytes / 1024).toFixed(digits)} KiB`;
export const pct = (ratio: number): string => `${(ratio * 100).toFixed(1)}%`;
export const rps = (v: number): string => `${Math.round(v).toLocaleString('en-US')} req/s`;
