// Reads /metrics the way Prometheus does: the text exposition format, parsed into samples.
import { expect } from 'vitest';
import type { FastifyInstance } from 'fastify';

export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export class Scrape {
  constructor(
    readonly text: string,
    readonly samples: Sample[],
  ) {}

  /** The samples of `name` whose labels include `labels`. */
  find(name: string, labels: Record<string, string> = {}): Sample[] {
    return this.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
  }

  /** Their sum; 0 when there is none (a counter no one has incremented yet has no series). */
  value(name: string, labels: Record<string, string> = {}): number {
    return this.find(name, labels).reduce((sum, s) => sum + s.value, 0);
  }
}

export function parseExposition(text: string): Scrape {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m) throw new Error(`not an exposition line: ${line}`);
    const labels: Record<string, string> = {};
    for (const l of (m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) labels[l[1]!] = l[2]!;
    samples.push({ name: m[1]!, labels, value: m[3]!.toLowerCase() === 'nan' ? Number.NaN : Number(m[3]) });
  }
  return new Scrape(text, samples);
}

export async function scrape(app: FastifyInstance, headers: Record<string, string> = {}): Promise<Scrape> {
  const res = await app.inject({ method: 'GET', url: '/metrics', headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parseExposition(res.body);
}

/** Runs `traffic` between two scrapes; returns how much a series moved. */
export async function measure(app: FastifyInstance, traffic: () => Promise<void>): Promise<(name: string, labels?: Record<string, string>) => number> {
  const before = await scrape(app);
  await traffic();
  const after = await scrape(app);
  return (name, labels = {}) => after.value(name, labels) - before.value(name, labels);
}
