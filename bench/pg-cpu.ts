// PostgreSQL's own CPU while a side is measured, when the server runs on this machine: the service host's CPU
// is only half of a hot path's cost, and on a small machine the other half (the statements the server runs)
// takes the same cores. Summed over every `postgres` process (backends, WAL writer, checkpointer) from /proc,
// whose counters tick at 100 Hz: good over a window of seconds, not for a single request. A process that ends
// (a backend closed, an autovacuum worker done) takes its CPU out of the sum; the postmaster's count of its reaped
// children puts it back, so a difference never goes negative.
import { readdir, readFile } from 'node:fs/promises';

const TICK_MS = 10; // USER_HZ is 100 on Linux

/** CPU ms used so far by the processes named `postgres` on this machine; null where /proc shows none. */
export async function postgresCpuMs(): Promise<number | null> {
  let pids: string[];
  try {
    pids = (await readdir('/proc')).filter((d) => /^\d+$/.test(d));
  } catch {
    return null;
  }
  let ticks = 0;
  let found = false;
  await Promise.all(
    pids.map(async (pid) => {
      const stat = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => '');
      // "pid (comm) state ppid …": comm may hold spaces, so fields are counted from the closing parenthesis.
      const close = stat.lastIndexOf(')');
      if (close < 0 || stat.slice(stat.indexOf('(') + 1, close) !== 'postgres') return;
      const fields = stat.slice(close + 2).split(' ');
      // utime, stime, then cutime, cstime: the ended children waited for (fields 14–17 of stat).
      ticks += Number(fields[11]) + Number(fields[12]) + Number(fields[13]) + Number(fields[14]);
      found = true;
    }),
  );
  return found ? ticks * TICK_MS : null;
}
