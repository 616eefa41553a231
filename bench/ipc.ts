// A tiny request/response protocol over Node's IPC channel, used both ways between the bench orchestrator and its
// child processes (service host, runtime fakes, load generator). Messages use the 'advanced' serialization, so
// typed arrays (latency samples) cross without JSON.
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export type Handler = (args: never) => unknown;
export type Handlers = Record<string, Handler>;

interface Endpoint {
  send?(message: unknown): boolean;
  on(event: 'message', listener: (message: unknown) => void): unknown;
}

type Message =
  | { rpc: 'ready' }
  | { rpc: 'req'; id: number; method: string; args: unknown }
  | { rpc: 'res'; id: number; ok: true; value: unknown }
  | { rpc: 'res'; id: number; ok: false; error: string };

export class Rpc {
  #nextId = 1;
  readonly #pending = new Map<number, { resolve(v: unknown): void; reject(e: Error): void; method: string }>();
  #readyResolve: (() => void) | null = null;
  readonly ready: Promise<void>;

  constructor(
    private readonly endpoint: Endpoint,
    private readonly handlers: Handlers = {},
  ) {
    this.ready = new Promise((resolve) => (this.#readyResolve = resolve));
    endpoint.on('message', (raw) => void this.#onMessage(raw as Message));
  }

  call<T>(method: string, args?: unknown): Promise<T> {
    const id = this.#nextId++;
    return new Promise<T>((resolve, reject) => {
      this.#pending.set(id, { resolve: resolve as (v: unknown) => void, reject, method });
      this.#send({ rpc: 'req', id, method, args });
    });
  }

  /** Fails every call still waiting (the other side exited). */
  failAll(why: string): void {
    for (const [id, p] of this.#pending) {
      this.#pending.delete(id);
      p.reject(new Error(`${p.method}: ${why}`));
    }
  }

  /** A child tells its parent it has installed its handlers. */
  announceReady(): void {
    this.#send({ rpc: 'ready' });
  }

  #send(message: Message): void {
    if (!this.endpoint.send) throw new Error('no IPC channel (was this process started by bench/run.ts?)');
    this.endpoint.send(message);
  }

  async #onMessage(msg: Message): Promise<void> {
    if (msg.rpc === 'ready') return this.#readyResolve?.();
    if (msg.rpc === 'res') {
      const p = this.#pending.get(msg.id);
      if (!p) return;
      this.#pending.delete(msg.id);
      if (msg.ok) p.resolve(msg.value);
      else p.reject(new Error(`${p.method}: ${msg.error}`));
      return;
    }
    const handler = this.handlers[msg.method] as ((args: unknown) => unknown) | undefined;
    try {
      if (!handler) throw new Error(`no handler for ${msg.method}`);
      const value = await handler(msg.args);
      this.#send({ rpc: 'res', id: msg.id, ok: true, value });
    } catch (err) {
      this.#send({ rpc: 'res', id: msg.id, ok: false, error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
    }
  }
}

/** Inside a child: serve `handlers` to the parent and get an Rpc for calling the parent back. */
export function serveParent(handlers: Handlers): Rpc {
  const rpc = new Rpc(process, handlers);
  process.on('disconnect', () => process.exit(0)); // the orchestrator is gone: nothing left to do
  rpc.announceReady();
  return rpc;
}

export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

export interface ChildHandle {
  name: string;
  child: ChildProcess;
  rpc: Rpc;
  stop(): Promise<void>;
}

/**
 * Starts `bench/<file>` as a child running TypeScript through tsx, with an IPC channel. Its stdout (where a
 * service's pino log goes) is discarded unless `stdout: 'inherit'`; stderr is shown.
 */
export async function startChild(
  name: string,
  file: string,
  opts: { handlers?: Handlers; execArgv?: string[]; stdout?: 'inherit' | 'ignore' } = {},
): Promise<ChildHandle> {
  const child = fork(path.join(REPO_ROOT, 'bench', file), [], {
    cwd: REPO_ROOT,
    execArgv: ['--import', 'tsx', ...(opts.execArgv ?? [])],
    stdio: ['ignore', opts.stdout ?? 'ignore', 'inherit', 'ipc'],
    serialization: 'advanced',
  });
  const rpc = new Rpc(child, opts.handlers);
  let exited = false;
  const exit = new Promise<void>((resolve) => {
    child.on('exit', (code, signal) => {
      exited = true;
      rpc.failAll(`${name} exited (${signal ?? code})`);
      resolve();
    });
  });
  await Promise.race([rpc.ready, exit.then(() => Promise.reject(new Error(`${name} exited before it was ready`)))]);
  return {
    name,
    child,
    rpc,
    async stop() {
      if (exited) return;
      child.disconnect();
      const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
      await exit;
      clearTimeout(timer);
    },
  };
}
