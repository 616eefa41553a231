// The printed table and docs/benchmarks.md.
import os from 'node:os';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { REPO_ROOT } from './ipc.ts';

export type Verdict = 'PASS' | 'MISS' | 'INFO' | 'SKIPPED' | 'ERROR';

export interface Figure {
  name: string;
  service: string;
  baseline: string;
  ratio: string;
  target: string;
  verdict: Verdict;
}

export class Report {
  readonly figures: Figure[] = [];
  /** Cost breakdowns, method notes and anything a reader needs to trust a figure. */
  readonly notes: string[] = [];

  add(f: Partial<Figure> & Pick<Figure, 'name' | 'verdict'>): void {
    const figure: Figure = { service: '', baseline: '', ratio: '', target: '', ...f };
    this.figures.push(figure);
    console.log(formatRow(figure));
  }

  note(line: string): void {
    this.notes.push(line);
    console.log(`  · ${line}`);
  }

  skipped(name: string, why: string, target = ''): void {
    this.add({ name, verdict: 'SKIPPED', service: `skipped: ${why}`, target });
  }

  table(): string {
    const head = ['figure', 'service', 'baseline', 'ratio', 'target', 'result'];
    const rows = this.figures.map((f) => [f.name, f.service, f.baseline, f.ratio, f.target, f.verdict]);
    const esc = (s: string) => s.replace(/\|/g, '\\|');
    return [`| ${head.join(' | ')} |`, `|${head.map(() => '---').join('|')}|`, ...rows.map((r) => `| ${r.map(esc).join(' | ')} |`)].join('\n');
  }
}

function formatRow(f: Figure): string {
  const cells = [f.name.padEnd(58), f.service.padEnd(26), f.baseline ? `baseline ${f.baseline}`.padEnd(30) : ''.padEnd(30), f.ratio.padEnd(8), f.target.padEnd(10), f.verdict];
  return cells.join(' ').replace(/\s+$/, '');
}

export function machine(dbLabel: string): Record<string, string> {
  const cpus = os.cpus();
  return {
    CPU: `${cpus[0]?.model ?? 'unknown'} (${cpus.length} logical cores)`,
    Memory: `${(os.totalmem() / 1024 ** 3).toFixed(1)} GiB`,
    OS: `${os.type()} ${os.release()} ${os.arch()}`,
    Node: process.version,
    Database: dbLabel,
  };
}

export async function writeMarkdown(r: Report, m: Record<string, string>, meta: { startedAt: Date; seconds: number; method: string[]; output: string }): Promise<string> {
  const file = path.join(REPO_ROOT, 'docs', 'benchmarks.md');
  const text = `# Benchmarks

Written by \`npm run bench\` (bench/run.ts) on every run; do not edit by hand. Each service figure is printed
beside a baseline measured in the same run on the same machine, so the ratio holds on a noisy machine. Benchmarks
are not tests: \`npm test\` has no timing assertions.

Latest run: ${meta.startedAt.toISOString()} (${meta.seconds.toFixed(0)} s).

## Machine

${Object.entries(m).map(([k, v]) => `- ${k}: ${v}`).join('\n')}

## Results

${r.table()}

## Cost breakdown and notes

${r.notes.map((n) => `- ${n}`).join('\n') || '- none'}

## Method

${meta.method.map((l) => `- ${l}`).join('\n')}

## Full output

\`\`\`text
${meta.output.trimEnd()}
\`\`\`
`;
  await writeFile(file, text);
  return file;
}
