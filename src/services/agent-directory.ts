// Agents are read on every authenticated request; caching them keeps a caller that is over its rate limit from
// costing the database anything (issue 4's 429 benchmark). A change (key rotation, toggle) is broadcast with
// NOTIFY and evicted on every instance at once; a short TTL is the backstop if a notification is lost.
import type { Db } from '../storage/db.ts';
import { AGENT_CHANGED_CHANNEL, findAgent, findAgentByAgentKeyDigest, notifyAgentChanged, type AgentRow } from '../storage/agents-repo.ts';
import { digest } from '../lib/secrets.ts';

const TTL_MS = 5_000;
const MAX_ENTRIES = 20_000;

interface Entry {
  agent: AgentRow | null;
  expires: number;
}

export class AgentDirectory {
  private readonly byId = new Map<number, Entry>();
  private readonly idByAgentKey = new Map<string, { id: number; expires: number }>();
  private stopListening: (() => Promise<void>) | null = null;

  constructor(private readonly db: Db) {}

  async start(): Promise<void> {
    this.stopListening = await this.db.listen(AGENT_CHANGED_CHANNEL, (payload) => this.evict(Number(payload)));
  }

  async stop(): Promise<void> {
    await this.stopListening?.();
  }

  async get(id: number): Promise<AgentRow | null> {
    if (!Number.isSafeInteger(id) || id <= 0) return null;
    const hit = this.byId.get(id);
    if (hit && hit.expires > Date.now()) return hit.agent;
    const agent = await findAgent(this.db, id);
    this.remember(id, agent);
    return agent;
  }

  /** The agent whose `agent_api_key` this is, or null. */
  async byAgentKey(key: string): Promise<AgentRow | null> {
    const d = digest(key);
    const hex = d.toString('hex');
    const hit = this.idByAgentKey.get(hex);
    if (hit && hit.expires > Date.now()) {
      const agent = await this.get(hit.id);
      if (agent) return agent;
    }
    const agent = await findAgentByAgentKeyDigest(this.db, d);
    if (!agent) return null;
    this.remember(agent.id, agent);
    this.idByAgentKey.set(hex, { id: agent.id, expires: Date.now() + TTL_MS });
    return agent;
  }

  /** Call after writing an agent: evicts here and on every other instance. */
  async changed(id: number): Promise<void> {
    this.evict(id);
    await notifyAgentChanged(this.db, id);
  }

  private evict(id: number): void {
    this.byId.delete(id);
    for (const [hex, v] of this.idByAgentKey) if (v.id === id) this.idByAgentKey.delete(hex);
  }

  private remember(id: number, agent: AgentRow | null): void {
    if (this.byId.size >= MAX_ENTRIES) this.byId.clear();
    if (this.idByAgentKey.size >= MAX_ENTRIES) this.idByAgentKey.clear();
    this.byId.set(id, { agent, expires: Date.now() + TTL_MS });
  }
}
