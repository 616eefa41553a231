// bench/stats.ts: the two pieces the bench's verdicts rest on beyond percentiles (issue 15). The scale ratios are
// medians of 10 rounds, and a median that took the upper middle value passed a figure it should have shown lower;
// the wake figure's tail count asks which samples overlapped a GC pause.
import { describe, expect, it } from 'vitest';
import { median, overlaps } from '../../bench/stats.ts';

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
