// bench/stats.ts: what the bench's verdicts rest on (issue 15). The scale ratios are medians of 10 rounds, and a
// median that took the upper middle value passed a figure it should have shown lower; the wake figure's tail count
// asks which samples overlapped a GC pause; every latency figure's p50, p95 and p99 is one nearest-rank percentile.
import { describe, expect, it } from 'vitest';
import { median, nearestRank, overlaps, summarize } from '../../bench/stats.ts';
import { p50p95 } from '../../bench/scenarios/scale/targets.ts';

describe('median', () => {
  it('is the middle value of an odd count and the mean of the two middle values of an even one', () => {
    expect(median([3, 1, 2])).toBe(2);
    expect(median([5])).toBe(5);
    // Run AA's 10M /trigger rounds: the upper middle value read 98%, the median is 92%.
    expect(median([110, 75, 77, 79, 101, 98, 86, 71, 102, 117])).toBe(92);
    expect(median([1, 2])).toBe(1.5);
  });

  it('leaves its input in its order', () => {
    const xs = [3, 1, 2, 0];
    median(xs);
    expect(xs).toEqual([3, 1, 2, 0]);
  });
});

describe('overlaps', () => {
  it('counts a pause that touches the window at either end, and none that ends before or starts after it', () => {
    expect(overlaps({ at: 10, ms: 5 }, 12, 20)).toBe(true); // began before, still running at the start
    expect(overlaps({ at: 15, ms: 1 }, 12, 20)).toBe(true); // inside
    expect(overlaps({ at: 20, ms: 3 }, 12, 20)).toBe(true); // begins at the end
    expect(overlaps({ at: 5, ms: 7 }, 12, 20)).toBe(true); // ends at the start
    expect(overlaps({ at: 5, ms: 6.9 }, 12, 20)).toBe(false);
    expect(overlaps({ at: 20.1, ms: 3 }, 12, 20)).toBe(false);
  });
});

describe('nearestRank', () => {
  const hundred = Float64Array.from({ length: 100 }, (_, i) => i + 1); // 1..100

  it('is the smallest value with at least that share of the values at or below it', () => {
    expect(nearestRank(hundred, 0.5)).toBe(50);
    expect(nearestRank(hundred, 0.99)).toBe(99); // of 100 samples, p99 is the 2nd-worst (of the wake's 3,000, the 31st)
    expect(nearestRank(hundred, 1)).toBe(100);
    expect(nearestRank(hundred, 0)).toBe(1);
    expect(nearestRank([7], 0.95)).toBe(7);
    expect(nearestRank([], 0.5)).toBeNaN();
  });

  it('is what summarize and the scale figures report, whatever order the samples came in', () => {
    const shuffled = [...hundred].reverse();
    expect(summarize(shuffled)).toMatchObject({ p50: 50, p90: 90, p99: 99, max: 100, n: 100 });
    expect(p50p95(shuffled)).toEqual({ p50: 50, p95: 95 });
    // Numbers, not strings: 10 sorts after 9.
    expect(p50p95([10, 9, 8])).toEqual({ p50: 9, p95: 10 });
  });
});
