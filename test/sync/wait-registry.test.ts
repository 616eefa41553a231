// The wait registry's backstop (decisions.md "Scale-out", issue 11): when LISTEN comes back, held waits look for the
// terminal writes whose NOTIFY was lost. A look asked for while a backstop read is already running must not be
// dropped: that read may have run before the write (seen once in CI as a wait held to its deadline).
import { describe, expect, it } from 'vitest';
import type { FastifyBaseLogger } from 'fastify';
import { WaitRegistry } from '../../src/sync/wait-registry.ts';
import type { RunWatch } from '../../src/runs/run-watch.ts';
import type { Db } from '../../src/storage/db.ts';

const silent = { warn() {}, error() {}, info() {}, debug() {} } as unknown as FastifyBaseLogger;

describe('WaitRegistry backstop', () => {
  it('issue 11: a reconnect during a running backstop read is followed by another read, not by the next period', async () => {
    let terminal = false;
    const reads: Array<() => void> = [];
    // Each backstop read sees the runs table as it is when the read starts, and answers when the test lets it.
    const db = {
      query: (_sql: string) => {
        const rows = terminal ? [{ id: 7, status: 'completed' }] : [];
        return new Promise((resolve) => reads.push(() => resolve({ rows, rowCount: rows.length })));
      },
    } as unknown as Db;
    let reconnect = (): void => {};
    const published: Array<[number, string]> = [];
    const watch = {
      onReconnect: (cb: () => void) => ((reconnect = cb), () => {}),
      publish: (id: number, status: string) => published.push([id, status]),
    } as unknown as RunWatch;
    const registry = new WaitRegistry(db, watch, silent, 600_000);
    registry.add(7, async () => {});

    registry.checkNow(); // a backstop read starts: the run is not terminal yet
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(1);
    terminal = true; // the terminal write lands, its NOTIFY lost with the LISTEN connection
    reconnect(); // LISTEN is back while the first read is still running
    reads.shift()!(); // the first read answers what it saw: nothing
    await new Promise((r) => setImmediate(r));
    expect(reads).toHaveLength(1); // a second read at once, not 600 s later
    reads.shift()!();
    await new Promise((r) => setImmediate(r));
    expect(published).toEqual([[7, 'completed']]);
  });
});
