// `npm run reseal` (decisions.md "Storage and secrets"; issue 12, finding 8): after it, every sealed value opens
// with the current key alone, bound to its place; it is idempotent, works in batches, leaves values in use alone,
// and reports what does not open without printing a secret.
import { execFile } from 'node:child_process';
import { randomBytes, randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SecretBox, singleKeyring, type MasterKey } from '../../src/lib/secrets.ts';
import type { Queryable } from '../../src/storage/db.ts';
import { migrate } from '../../src/storage/migrate.ts';
import { openPGlite } from '../../src/storage/pglite-db.ts';
import { resealSecrets, type ResealCount } from '../../src/storage/reseal.ts';
import { reserveId, SEALED_COLUMNS, sealedAt } from '../../src/storage/sealed-columns.ts';
import { createTestDb, type TestDb } from '../helpers/test-db.ts';
import { sealV1 } from '../helpers/sealed-v1.ts';

const A: MasterKey = { id: 'a', key: randomBytes(32) };
const B: MasterKey = { id: 'b', key: randomBytes(32) };
const onlyA = new SecretBox({ current: 'a', keys: [A] });
const rotated = new SecretBox({ current: 'b', keys: [B, A] });
const onlyB = new SecretBox({ current: 'b', keys: [B] });

/** Every sealed value of the database with its place: [table, column, id, sealed]. */
async function allSealed(q: Queryable): Promise<Array<[string, string, string | number, string]>> {
  const out: Array<[string, string, string | number, string]> = [];
  for (const [table, columns] of Object.entries(SEALED_COLUMNS)) {
    for (const column of columns) {
      const { rows } = await q.query<{ id: string | number; v: string }>(`SELECT id, ${column} AS v FROM ${table} WHERE ${column} IS NOT NULL ORDER BY id`);
      for (const r of rows) out.push([table, column, r.id, r.v]);
    }
  }
  return out;
}

/**
 * One organization with a runtime, an agent, `connections` connections and a webhook action, sealed as a
 * database of before key ids holds them (v1 under A, `legacy`) or as one written under key A (v2). Returns every
 * plaintext by place.
 */
async function seed(q: Queryable, opts: { legacy: boolean; connections: number }): Promise<Map<string, string>> {
  const plain = new Map<string, string>();
  const sealed = (table: string, column: string, id: string | number, value: string) => {
    plain.set(`${table}.${column}.${id}`, value);
    return opts.legacy ? sealV1(A.key, value) : onlyA.seal(value, { table, column, row: id });
  };
  const orgId = randomUUID();
  await q.query('INSERT INTO organizations (id, name) VALUES ($1, $2)', [orgId, 'Reseal']);
  const rt = await reserveId(q, 'runtimes');
  await q.query(
    `INSERT INTO runtimes (id, org_id, name, kind, base_url, api_key_enc, alert_secret_enc) OVERRIDING SYSTEM VALUE VALUES ($1, $2, 'rt', 'task', 'https://rt.example.test', $3, $4)`,
    [rt, orgId, sealed('runtimes', 'api_key_enc', rt, `tr_${randomUUID()}`), sealed('runtimes', 'alert_secret_enc', rt, `alert_${randomUUID()}`)],
  );
  const agent = await reserveId(q, 'agents');
  const digest = randomBytes(32);
  await q.query(
    `INSERT INTO agents (id, org_id, name, managed_by, ingest_key_digest, agent_key_digest, agent_key_enc, webhook_token_enc, zone_secret_enc, credentials_secret_enc)
     OVERRIDING SYSTEM VALUE VALUES ($1, $2, 'agent', 'standalone', $3, $3, $4, $5, $6, $7)`,
    [
      agent,
      orgId,
      digest,
      sealed('agents', 'agent_key_enc', agent, `ars_agent_${randomUUID()}`),
      sealed('agents', 'webhook_token_enc', agent, `ars_whk_${randomUUID()}`),
      sealed('agents', 'zone_secret_enc', agent, `ars_zone_${randomUUID()}`),
      sealed('agents', 'credentials_secret_enc', agent, randomUUID()),
    ],
  );
  for (let i = 0; i < opts.connections; i++) {
    const id = randomUUID();
    await q.query(`INSERT INTO connections (id, agent_id, integration_id, type, secret_enc, active) VALUES ($1, $2, $3, 'api_key', $4, false)`, [
      id,
      agent,
      `int-${i}`,
      sealed('connections', 'secret_enc', id, JSON.stringify({ value: `sk_live_${randomUUID()}` })),
    ]);
  }
  const action = randomUUID();
  await q.query(`INSERT INTO webhook_actions (id, agent_id, on_state, url, signing_secret_enc) VALUES ($1, $2, 'completed', 'https://h.example.test', $3)`, [
    action,
    agent,
    sealed('webhook_actions', 'signing_secret_enc', action, `whsec_${randomUUID()}`),
  ]);
  return plain;
}

const total = (counts: ResealCount[], key: keyof Omit<ResealCount, 'table' | 'column'>) => counts.reduce((n, c) => n + c[key], 0);

let t: TestDb;
beforeAll(async () => {
  t = await createTestDb();
});
afterAll(() => t.drop());

describe('sealed columns', () => {
  it('SEALED_COLUMNS names every *_enc column of the schema, so the re-seal misses none', async () => {
    const { rows } = await t.db.query<{ name: string }>(
      `SELECT table_name || '.' || column_name AS name FROM information_schema.columns
       WHERE table_schema = current_schema() AND column_name LIKE '%\\_enc' ORDER BY 1`,
    );
    const listed = Object.entries(SEALED_COLUMNS).flatMap(([table, columns]) => columns.map((c) => `${table}.${c}`));
    expect(rows.map((r) => r.name)).toEqual(listed.sort());
  });
});

describe('resealSecrets: rotating from key A to key B', () => {
  let plain: Map<string, string>;
  let leased: string;

  beforeAll(async () => {
    plain = new Map([...(await seed(t.db, { legacy: true, connections: 3 })), ...(await seed(t.db, { legacy: false, connections: 2 }))]);
    // A connection an OAuth refresh holds right now: its secret_enc must not change under the refresh.
    const { rows } = await t.db.query<{ id: string }>(
      "UPDATE connections SET refresh_lease = gen_random_uuid(), refresh_lease_until = now() + interval '1 minute' WHERE id = (SELECT min(id::text)::uuid FROM connections) RETURNING id",
    );
    leased = rows[0]!.id;
  });

  it('re-seals v1 values and values under A in batches, reporting counts per table and column, and leaves a leased connection for later', async () => {
    const seen: string[] = [];
    const report = await resealSecrets(t.db, rotated, { batchSize: 2, onBatch: (c) => seen.push(`${c.table}.${c.column}`) });
    expect(report.keyId).toBe('b');
    expect(report.counts.map((c) => `${c.table}.${c.column}`)).toEqual(Object.entries(SEALED_COLUMNS).flatMap(([tb, cs]) => cs.map((c) => `${tb}.${c}`)));
    expect(report.counts.find((c) => c.table === 'connections')).toEqual({ table: 'connections', column: 'secret_enc', values: 5, resealed: 4, current: 0, busy: 1, failed: 0 });
    expect(report.counts.find((c) => c.column === 'zone_secret_enc')).toMatchObject({ values: 2, resealed: 2, busy: 0 });
    expect(seen.filter((s) => s === 'connections.secret_enc')).toHaveLength(3); // 5 values, batches of 2
    expect(total(report.counts, 'values')).toBe(plain.size);
    expect(report).toMatchObject({ failures: [], complete: false });
  });

  it('every value but the leased one now opens with key B alone, bound to its place; the leased one is still under A', async () => {
    for (const [table, column, id, sealed] of await allSealed(t.db)) {
      const at = { table, column, row: id };
      if (id === leased) {
        expect(onlyA.open(sealed, at)).toBe(plain.get(`${table}.${column}.${id}`));
        continue;
      }
      expect(sealed.startsWith('v2:b:'), `${table}.${column}`).toBe(true);
      expect(onlyB.open(sealed, at)).toBe(plain.get(`${table}.${column}.${id}`));
    }
  });

  it('run again once the lease ended: the last value is re-sealed, the rest only checked; then it is complete', async () => {
    await t.db.query('UPDATE connections SET refresh_lease = NULL, refresh_lease_until = NULL WHERE id = $1', [leased]);
    const again = await resealSecrets(t.db, rotated);
    expect(total(again.counts, 'resealed')).toBe(1);
    expect(total(again.counts, 'current')).toBe(plain.size - 1);
    expect(again.complete).toBe(true);
    const third = await resealSecrets(t.db, rotated);
    expect([total(third.counts, 'resealed'), total(third.counts, 'current'), third.complete]).toEqual([0, plain.size, true]);
    for (const [table, column, id, sealed] of await allSealed(t.db)) expect(onlyB.open(sealed, { table, column, row: id })).toBe(plain.get(`${table}.${column}.${id}`));
  });

  it('a value that does not open (unknown key, or moved from another row) is reported by place, never by value, and left as is', async () => {
    const [row] = (await t.db.query<{ id: number; zone_secret_enc: string }>('SELECT id, zone_secret_enc FROM agents ORDER BY id LIMIT 1')).rows;
    const [other] = (await t.db.query<{ id: number; zone_secret_enc: string }>('SELECT id, zone_secret_enc FROM agents ORDER BY id DESC LIMIT 1')).rows;
    const stranger = new SecretBox({ current: 'c', keys: [{ id: 'c', key: randomBytes(32) }] }).seal('ars_zone_STRANGER', sealedAt('agents', 'zone_secret_enc', row!.id));
    await t.db.query('UPDATE agents SET zone_secret_enc = $2, agent_key_enc = $3 WHERE id = $1', [row!.id, stranger, other!.zone_secret_enc]);
    const report = await resealSecrets(t.db, rotated);
    expect(report.complete).toBe(false);
    expect(report.failures).toEqual([
      `agents.agent_key_enc of row ${row!.id} does not open: it was sealed for another row or column, or altered`,
      `agents.zone_secret_enc of row ${row!.id} was sealed under master key "c", which is not configured (configured: b, a)`,
    ]);
    expect(total(report.counts, 'failed')).toBe(2);
    const after = (await t.db.query<{ zone_secret_enc: string }>('SELECT zone_secret_enc FROM agents WHERE id = $1', [row!.id])).rows[0]!;
    expect(after.zone_secret_enc).toBe(stranger);
  });
});

describe('npm run reseal on the embedded default (PGlite and its generated master.key)', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), 'ars-reseal-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  const reseal = (env: Record<string, string>) =>
    promisify(execFile)(process.execPath, ['--import', 'tsx', 'src/storage/reseal-cli.ts'], {
      cwd: path.resolve(import.meta.dirname, '../..'),
      env: { PATH: process.env.PATH ?? '', ARS_DATA_DIR: dir, ...env },
    });

  it('upgrades the v1 values of a database written before key ids to v2 under master.key ("default"); it prints counts, never a secret', async () => {
    await writeFile(path.join(dir, 'master.key'), A.key.toString('base64') + '\n', { mode: 0o600 });
    let db = await openPGlite(path.join(dir, 'pgdata'));
    await migrate(db);
    const plain = await seed(db, { legacy: true, connections: 1 });
    await db.close();

    const out = await reseal({});
    expect(out.stdout).toContain('sealing with master key "default"; keys that open: default');
    expect(out.stdout).toMatch(/connections\.secret_enc.*│\s+1\s+│\s+1\s+│\s+0/);
    expect(out.stdout).toContain('every sealed secret is under "default"');
    for (const value of plain.values()) expect(out.stdout + out.stderr).not.toContain(value);

    db = await openPGlite(path.join(dir, 'pgdata'));
    try {
      const sealed = await allSealed(db);
      expect(sealed).toHaveLength(plain.size);
      const embedded = new SecretBox(singleKeyring(A.key));
      for (const [table, column, id, value] of sealed) {
        expect(value.startsWith('v2:default:')).toBe(true);
        expect(embedded.open(value, { table, column, row: id })).toBe(plain.get(`${table}.${column}.${id}`));
      }
    } finally {
      await db.close();
    }
  }, 120_000); // a child process and two PGlite opens: slow on a loaded machine
});
