// One writer per embedded database (decisions.md "One process per data folder"): PGlite has no lock of its own,
// and two processes on one folder each see only their own writes. The holder listens on a Unix socket in the
// folder, `ars.lock`. The kernel closes that socket when the process ends however it ends (kill -9 too), so a
// socket that refuses connections is stale and is taken over, while one that answers belongs to a live process —
// on this machine or in another container sharing the volume — and the newcomer refuses to start, naming it.
// The socket is bound under a private name and hard-linked to `ars.lock`: link() fails when the name exists, so two
// starters never both acquire a free folder.
import { link, mkdir, stat, unlink } from 'node:fs/promises';
import net from 'node:net';
import { hostname } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import { StartupError } from '../lib/startup-error.ts';

export const LOCK_FILE = 'ars.lock';
/** Linux's sun_path holds 108 bytes with its terminating NUL; a longer path is reached from inside the folder. */
const MAX_SOCKET_PATH = 107;
/** After taking over a stale lock: how long a starter that raced on the same stale lock has to show itself. */
const TAKEOVER_SETTLE_MS = 200;

export interface DataDirLock {
  /** Closes the socket and removes `ars.lock` when it is still this process's. */
  release(): Promise<void>;
}

interface Holder {
  pid: number;
  host: string;
  since: string;
  token: string;
}

/**
 * Takes the data folder for this process (creating the folder), or throws a StartupError naming ARS_DATA_DIR and
 * the process that holds it. `say` receives one line when a stale lock is taken over.
 */
export async function lockDataDir(dir: string, say: (line: string) => void = () => {}): Promise<DataDirLock> {
  try {
    await mkdir(dir, { recursive: true, mode: 0o700 });
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StartupError(`ARS_DATA_DIR ${dir} cannot be created (${code}): point ARS_DATA_DIR at a folder this user (uid ${process.getuid?.() ?? '?'}) may write`);
  }
  const me: Holder = { pid: process.pid, host: hostname(), since: new Date().toISOString(), token: randomBytes(12).toString('hex') };
  const lockPath = path.join(dir, LOCK_FILE);
  const privateName = `.ars-lock-${me.token}`;
  const server = net.createServer((socket) => socket.on('error', () => {}).end(JSON.stringify(me) + '\n'));
  server.unref(); // never what keeps the process alive
  try {
    await inDir(dir, privateName, (p) => listen(server, p));
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new StartupError(`ARS_DATA_DIR ${dir} is not writable (${code}): point ARS_DATA_DIR at a folder this user (uid ${process.getuid?.() ?? '?'}) may write`);
  }
  const close = () => new Promise<void>((resolve) => server.close(() => resolve())); // libuv unlinks the private name
  try {
    let tookOver = false;
    for (let attempt = 0; ; attempt++) {
      try {
        await link(path.join(dir, privateName), lockPath);
        break;
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 5) throw err;
      }
      const holder = await ask(dir, LOCK_FILE);
      if (holder) throw inUse(dir, holder);
      // Nobody answers: the process that made it has ended. Remove it and link ours in its place.
      say(`ARS_DATA_DIR ${dir}: taking over the lock of a process that has ended`);
      await unlink(lockPath).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== 'ENOENT') throw e;
      });
      tookOver = true;
    }
    const ours = await stat(lockPath);
    await unlink(path.join(dir, privateName)).catch(() => {});
    if (tookOver) {
      // Two starters that found the same stale lock: the later unlink may have removed the earlier one's link.
      // Whoever `ars.lock` does not lead to after a moment has lost, and says who won.
      await new Promise((resolve) => setTimeout(resolve, TAKEOVER_SETTLE_MS));
      const holder = await ask(dir, LOCK_FILE);
      if (holder && holder.token !== me.token) throw inUse(dir, holder);
    }
    return {
      async release() {
        const now = await stat(lockPath).catch(() => null);
        if (now && now.ino === ours.ino && now.dev === ours.dev) await unlink(lockPath).catch(() => {});
        await close();
      },
    };
  } catch (err) {
    await close();
    throw err;
  }
}

function inUse(dir: string, h: Holder): StartupError {
  return new StartupError(
    `ARS_DATA_DIR ${dir} is in use by another process of this service (pid ${h.pid} on host ${h.host}, since ${h.since}): ` +
      'an embedded database takes one process; stop that one first, or run several instances on PostgreSQL (DATABASE_URL)',
  );
}

/** Connects to the lock socket: the holder it describes, or null when nothing listens there (stale, or gone). */
function ask(dir: string, name: string): Promise<Holder | null> {
  return inDir(dir, name, (p) =>
    new Promise<Holder | null>((resolve, reject) => {
      const socket = net.connect(p);
      let text = '';
      socket.setTimeout(5_000, () => socket.destroy(new Error('the lock holder did not answer within 5 s')));
      socket.on('data', (chunk) => (text += chunk.toString('utf8')));
      socket.on('end', () => {
        try {
          resolve(JSON.parse(text) as Holder);
        } catch {
          resolve({ pid: 0, host: 'unknown', since: 'unknown', token: '' });
        }
      });
      socket.on('error', (err: NodeJS.ErrnoException) => (err.code === 'ECONNREFUSED' || err.code === 'ENOENT' ? resolve(null) : reject(err)));
    }),
  );
}

function listen(server: net.Server, p: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(p, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/**
 * Runs `fn` with the socket's path: absolute when it fits in sun_path, otherwise relative with the folder as the
 * working directory while the bind or connect call is made (both take the path synchronously).
 */
async function inDir<T>(dir: string, name: string, fn: (p: string) => Promise<T>): Promise<T> {
  const full = path.join(dir, name);
  if (Buffer.byteLength(full) <= MAX_SOCKET_PATH) return fn(full);
  const cwd = process.cwd();
  process.chdir(dir);
  let pending: Promise<T>;
  try {
    pending = fn(name);
  } finally {
    process.chdir(cwd);
  }
  return pending;
}
