// Real processes for the operations tests (issue 37): start a command, collect its output, wait for its exit.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import path from 'node:path';

export const ROOT = path.resolve(import.meta.dirname, '../..');

export interface Proc {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (or the signal's name) once the process has ended. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

export function run(command: string, args: string[], env: Record<string, string>): Proc {
  const child = spawn(command, args, {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LOG_LEVEL: 'info', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  child.stderr!.on('data', (c: Buffer) => (out += c.toString('utf8')));
  // 'close', not 'exit': the output is complete once both pipes are closed.
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) => child.once('close', (code, signal) => resolve({ code, signal })));
  return { child, output: () => out, exited };
}

/** The service from its sources, as `npm run dev` runs it (tsx as a loader inside one node process). */
export function runService(env: Record<string, string>): Proc {
  return run(process.execPath, ['--import', 'tsx', 'src/server.ts'], { HOST: '127.0.0.1', ...env });
}

/** Runs to the end, or kills it after `ms` and fails. */
export async function runToExit(proc: Proc, ms = 60_000): Promise<{ code: number | null; output: string }> {
  const timer = setTimeout(() => proc.child.kill('SIGKILL'), ms);
  const { code, signal } = await proc.exited;
  clearTimeout(timer);
  if (signal === 'SIGKILL') throw new Error(`did not exit within ${ms} ms:\n${proc.output()}`);
  return { code, output: proc.output() };
}

export async function waitForReady(url: string, proc: Proc, ms = 90_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (proc.child.exitCode !== null) throw new Error(`exited at start (${proc.child.exitCode}):\n${proc.output()}`);
    if (await fetch(`${url}/readyz`).then((r) => r.ok, () => false)) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`not ready within ${ms} ms:\n${proc.output()}`);
}

/** Whether host:port can be bound now (nothing listens there). */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolve) => {
    const s = createServer();
    s.once('error', () => resolve(false));
    s.listen({ port, host, exclusive: true }, () => s.close(() => resolve(true)));
  });
}

/** The pids of a process's children (Linux /proc). */
export function childrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(/\s+/).filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

export function commandLineOf(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' ').trim();
  } catch {
    return '';
  }
}

export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** An expected failure is told, not dumped: no line of a JavaScript stack trace. */
export function hasStackTrace(output: string): boolean {
  return /^\s+at .+(\(|:\d+:\d+)/m.test(output);
}
