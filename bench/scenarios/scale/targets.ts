// The bound for the scale figures ("within 10% of its empty-database value"), and how they are read.

export const MAX_RATIO = 1.1;

export function p50p95(values: number[]): { p50: number; p95: number } {
  const sorted = [...values].sort((x, y) => x - y);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? NaN;
  return { p50: at(0.5), p95: at(0.95) };
}

export function pctOver(ratio: number): string {
  return `${((ratio - 1) * 100).toFixed(0)}%`;
}
