// One side of the comparison: the service (a context and an app, app.inject: no network) on the scale database or
// on the empty one, pointed at this run's runtime fakes.
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import type { FastifyInstance } from 'fastify';
import type { Harness } from '../../harness.ts';
import { TASK, type AgentKeys } from '../../types.ts';
import { buildApp } from '../../../src/app.ts';
import { loadConfig } from '../../../src/config.ts';
import { createContext, type AppContext } from '../../../src/context.ts';
import { singleKeyring } from '../../../src/lib/secrets.ts';
import { newAgentSecrets } from '../../../src/agents/agent-secrets.ts';
import { sealedAt } from '../../../src/storage/sealed-columns.ts';
import { sweepTimeouts } from '../../../src/background/timeout-sweeper.ts';
import type { Db } from '../../../src/storage/db.ts';

/**
 * Agents given fresh keys each run, for /trigger and /callback (the busiest ones: most runs per agent). A block of
 * the hot-path figures is one request per keyed agent (their limit is 20 a minute): with 200, a /callback block
 * lasted about 70 ms and the rounds' ratios spread from 75% to 142% (issue 15, 2026-11-28), so 600.
 */
export const KEYED = 600;

/** Both sides' admin token (the console figures) and master key: this run's own. */
export const ADMIN_TOKEN = randomBytes(24).toString('hex');
const MASTER_KEY = randomBytes(32);

export interface Side {
  name: 'scale' | 'empty';
  db: Db;
  ctx: AppContext;
  app: FastifyInstance;
  keyed: AgentKeys[];
  taskAgents: number[];
}

/**
 * A context and an app on one database, pointed at this run's fakes: the runtimes get the fakes' URLs and keys
 * (sealed with this run's master key), the KEYED busiest Trigger.dev agents get fresh keys. Then the database is
 * settled: anything a previous run left due for polling stops being polled, and one timeout sweep fails what timed
 * out since (the seed's last-hour queued and running runs, on the first run), so a pass then sees only the runs a
 * figure made due; then ANALYZE.
 */
export async function openSide(name: Side['name'], db: Db, h: Harness): Promise<Side> {
  const config = loadConfig({ LOG_LEVEL: 'info' });
  const discard = new Writable({ write: (_c, _e, cb) => cb() });
  const ctx = await createContext({ config, db, masterKeys: singleKeyring(MASTER_KEY), adminToken: ADMIN_TOKEN, logStream: discard });
  const box = ctx.secrets;
  const { rows: rts } = await db.query<{ id: number; kind: string }>("SELECT r.id, r.kind FROM runtimes r JOIN organizations o ON o.id = r.org_id WHERE o.name LIKE 'scale org %'");
  for (const rt of rts) {
    const [url, key] = rt.kind === 'task' ? [h.fakeUrls.trigger, h.fakeUrls.triggerSecret] : [h.fakeUrls.n8n, h.fakeUrls.n8nApiKey];
    await db.query('UPDATE runtimes SET base_url = $2, api_key_enc = $3 WHERE id = $1', [rt.id, url, box.seal(key, sealedAt('runtimes', 'api_key_enc', rt.id))]);
  }
  const { rows: task } = await db.query<{ id: number }>(`SELECT id FROM agents WHERE name LIKE 'scale agent %' AND target = '${TASK}' ORDER BY name`);
  const keyed: AgentKeys[] = [];
  for (const { id } of task.slice(0, KEYED)) {
    const s = newAgentSecrets(box, id, false);
    const c = s.columns;
    await db.query(
      `UPDATE agents SET ingest_key_digest = $2, agent_key_digest = $3, agent_key_enc = $4, zone_secret_enc = $5, credentials_secret_enc = $6 WHERE id = $1`,
      [id, c.ingest_key_digest, c.agent_key_digest, c.agent_key_enc, c.zone_secret_enc, c.credentials_secret_enc],
    );
    keyed.push({ id, ingestKey: s.plain.ingest_api_key, agentKey: s.plain.agent_api_key });
  }
  await quiesce(db);
  await sweepTimeouts(ctx);
  // Fresh statistics, as autovacuum keeps them: the runs earlier bench runs left in flight (up to a timeout's
  // worth) outnumber what the seed's statistics say, and with stale ones a rare-status page reads the whole active
  // set through runs_active_created_idx (seen: 114 ms at 24,000 runs in flight) instead of runs_status_idx.
  // Past the pool's statement timeout: on ten million runs whose pages have left the OS cache, its 30,000 sampled
  // pages took longer than 15 s (2026-11-28, after runs that wrote more than before).
  await db.maintain('ANALYZE runs');
  const app = await buildApp(ctx);
  return { name, db, ctx, app, keyed, taskAgents: task.map((t) => t.id) };
}

/** Nothing is due for polling any more: what a previous run (or the /trigger figure) left polled stops being polled. */
export async function quiesce(db: Db): Promise<void> {
  await db.query('UPDATE runs SET next_poll_at = NULL, poll_lease_until = NULL WHERE next_poll_at IS NOT NULL');
}
