// Agents (with their active connection map) and runtimes are read on every run start and every authenticated
// request; caching them keeps the hot paths to the writes they must make, and a caller over its rate limit costs
// the database nothing. Every change (key rotation, toggle, connection or runtime edit) is broadcast with NOTIFY
// and evicted on every instance at once. Notifications are lost only while the LISTEN connection is down, so the
// whole cache is dropped when it comes back; the TTL is a last backstop. It is long because each miss costs the
// hot paths two statements: with thousands of agents calling a few times a minute, a 60 s TTL missed on about
// one request in three (bench).
//
// A load that was in flight when an eviction arrived may hold the row as it was before the change (a rotated key,
// say): it answers its own caller but is not cached, so an eviction is never undone by a slower read.
import type { Db } from '../storage/db.ts';
import { AGENT_CHANGED_CHANNEL, findAgent, findAgentByAgentKeyDigest, notifyAgentChanged, type AgentRow } from './agents-repo.ts';
import { activeConnectionIds, type ConnectionIds } from './connections-repo.ts';
import { findRuntime } from '../runtimes/runtimes-repo.ts';
import type { RuntimeConnection } from '../runtimes/runtime-adapter.ts';
import { toRuntimeConnection } from '../runtimes/runtime-connection.ts';
import { timingSafeEqual } from 'node:crypto';
import { digest, type SecretBox } from '../lib/secrets.ts';

const TTL_MS = 10 * 60_000;
const RUNTIME_PREFIX = 'runtime:';
/** Entries per map before the map is emptied (a bound on memory; the bench keeps its agents within it). */
export const AGENT_CACHE_ENTRIES = 20_000;

interface Entry {
  agent: AgentRow | null;
  expires: number;
}

export class AgentDirectory {
  private readonly byId = new Map<number, Entry>();
  private readonly idByAgentKey = new Map<string, { id: number; expires: number }>();
  private readonly connectionsByAgent = new Map<number, { ids: ConnectionIds; expires: number }>();
  private readonly runtimes = new Map<number, { runtime: RuntimeConnection | null; expires: number }>();
  private stopListening: (() => Promise<void>) | null = null;
  /** Bumped by every eviction: a load that started under an older value must not be cached. */
  private epoch = 0;

  constructor(
    private readonly db: Db,
    private readonly secrets: SecretBox,
  ) {}

  async start(): Promise<void> {
    this.stopListening = await this.db.listen(
      AGENT_CHANGED_CHANNEL,
      (payload) => {
        if (payload.startsWith(RUNTIME_PREFIX)) this.evictRuntime(Number(payload.slice(RUNTIME_PREFIX.length)));
        else this.evict(Number(payload));
      },
      () => this.clear(), // changes made while we were not listening are unknown
    );
  }

  async stop(): Promise<void> {
    await this.stopListening?.();
  }

  async get(id: number): Promise<AgentRow | null> {
    if (!Number.isSafeInteger(id) || id <= 0) return null;
    const hit = this.byId.get(id);
    if (hit && hit.expires > Date.now()) return hit.agent;
    const epoch = this.epoch;
    const agent = await findAgent(this.db, id);
    if (epoch === this.epoch) this.remember(id, agent);
    return agent;
  }

  /** The agent whose `agent_api_key` this is, or null. */
  async byAgentKey(key: string): Promise<AgentRow | null> {
    const d = digest(key);
    const hex = d.toString('hex');
    const hit = this.idByAgentKey.get(hex);
    if (hit && hit.expires > Date.now()) {
      const agent = await this.get(hit.id);
      // The id came from a digest seen earlier: the row must still carry it (a key rotated meanwhile does not).
      if (agent && agent.agent_key_digest.length === d.length && timingSafeEqual(agent.agent_key_digest, d)) return agent;
    }
    const epoch = this.epoch;
    const agent = await findAgentByAgentKeyDigest(this.db, d);
    if (!agent) return null;
    if (epoch === this.epoch) this.remember(agent.id, agent); // indexes it by this key's digest too
    return agent;
  }

  /** Spec 2.3 / 4.4: the agent's active connections keyed by integration_id. */
  async connectionIds(agentId: number): Promise<ConnectionIds> {
    const hit = this.connectionsByAgent.get(agentId);
    if (hit && hit.expires > Date.now()) return hit.ids;
    const epoch = this.epoch;
    const ids = await activeConnectionIds(this.db, agentId);
    if (epoch !== this.epoch) return ids;
    if (this.connectionsByAgent.size >= AGENT_CACHE_ENTRIES) this.connectionsByAgent.clear();
    this.connectionsByAgent.set(agentId, { ids, expires: Date.now() + TTL_MS });
    return ids;
  }

  /** A runtime with its API key opened, as the adapters need it; null for an unknown id. */
  async runtime(id: number): Promise<RuntimeConnection | null> {
    const hit = this.runtimes.get(id);
    if (hit && hit.expires > Date.now()) return hit.runtime;
    const epoch = this.epoch;
    const row = await findRuntime(this.db, id);
    const runtime = row ? toRuntimeConnection(this.secrets, row) : null;
    if (epoch === this.epoch) this.runtimes.set(id, { runtime, expires: Date.now() + TTL_MS });
    return runtime;
  }

  /** Call after writing an agent or its connections: evicts here and on every other instance. */
  async changed(id: number): Promise<void> {
    this.evict(id);
    await notifyAgentChanged(this.db, id);
  }

  /** Call after writing a runtime. */
  async runtimeChanged(id: number): Promise<void> {
    this.evictRuntime(id);
    await notifyAgentChanged(this.db, `${RUNTIME_PREFIX}${id}`);
  }

  private clear(): void {
    this.epoch++;
    this.byId.clear();
    this.idByAgentKey.clear();
    this.connectionsByAgent.clear();
    this.runtimes.clear();
  }

  private evictRuntime(id: number): void {
    this.epoch++;
    this.runtimes.delete(id);
  }

  private evict(id: number): void {
    this.epoch++;
    this.byId.delete(id);
    this.connectionsByAgent.delete(id);
    for (const [hex, v] of this.idByAgentKey) if (v.id === id) this.idByAgentKey.delete(hex);
  }

  private remember(id: number, agent: AgentRow | null): void {
    if (this.byId.size >= AGENT_CACHE_ENTRIES) this.byId.clear();
    if (this.idByAgentKey.size >= AGENT_CACHE_ENTRIES) this.idByAgentKey.clear();
    const expires = Date.now() + TTL_MS;
    this.byId.set(id, { agent, expires });
    // The row carries its agent key's digest: an agent loaded for any reason (its run's trigger, say) is then
    // found by its key too, so its task's first callback costs no lookup.
    if (agent) this.idByAgentKey.set(Buffer.from(agent.agent_key_digest).toString('hex'), { id, expires });
  }
}
