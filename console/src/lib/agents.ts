// Agents by id for the names the pages show (a run's, an audit entry's, a filter's choice), whatever the number of
// agents (issue 40 item 1: only the newest 200 existed anywhere in the console). One cache for the tab, so a
// navigation does not fetch them again (item 8); what a page needs and the cache lacks is asked for in batches of up
// to 200 ids (GET /api/admin/agents?ids=). Agents the user cannot see come back as absent and are named by id.
import { useEffect, useSyncExternalStore } from 'react';
import { api, unwrap, type Agent } from '../api/client.ts';

const BATCH = 200;

class AgentCache {
  readonly #known = new Map<number, Agent | null>(); // null: asked for, not visible to this user
  readonly #asking = new Set<number>();
  readonly #watchers = new Set<() => void>();
  #version = 0;

  get version(): number {
    return this.#version;
  }

  get(id: number): Agent | null | undefined {
    return this.#known.get(id);
  }

  /** Agents a page has loaded anyway (a list): their names need no request of their own. */
  remember(agents: readonly Agent[]): void {
    for (const a of agents) this.#known.set(a.id, a);
    this.#changed();
  }

  /** Asks for the ids neither known nor already asked for. */
  want(ids: readonly number[]): void {
    const missing = [...new Set(ids)].filter((id) => Number.isSafeInteger(id) && id > 0 && !this.#known.has(id) && !this.#asking.has(id));
    for (let i = 0; i < missing.length; i += BATCH) void this.#ask(missing.slice(i, i + BATCH));
  }

  watch = (w: () => void): (() => void) => {
    this.#watchers.add(w);
    return () => void this.#watchers.delete(w);
  };

  async #ask(ids: number[]): Promise<void> {
    for (const id of ids) this.#asking.add(id);
    try {
      const page = await unwrap(api.GET('/api/admin/agents', { params: { query: { ids: ids.join(','), limit: String(BATCH) } } }));
      const found = new Map(page.data.map((a) => [a.id, a]));
      for (const id of ids) this.#known.set(id, found.get(id) ?? null);
    } catch {
      // Named by id this time; a later page asks again.
    } finally {
      for (const id of ids) this.#asking.delete(id);
      this.#changed();
    }
  }

  #changed(): void {
    this.#version++;
    for (const w of this.#watchers) w();
  }
}

const cache = new AgentCache();

/** The agents `ids` name, fetched as needed; returns a lookup that re-renders the page when they arrive. */
export function useAgentLookup(ids: readonly number[]): (id: number) => Agent | null | undefined {
  useSyncExternalStore(cache.watch, () => cache.version);
  const key = [...new Set(ids)].sort((a, b) => a - b).join(',');
  useEffect(() => {
    if (key) cache.want(key.split(',').map(Number));
  }, [key]);
  return (id) => cache.get(id);
}

/** The agent's name, or "Agent {id}" while it loads or when the user may not see it. */
export function agentName(lookup: (id: number) => Agent | null | undefined, id: number): string {
  return lookup(id)?.name ?? `Agent ${id}`;
}

/** A list page's agents go into the cache: other pages then name them without asking. */
export function rememberAgents(agents: readonly Agent[]): void {
  cache.remember(agents);
}
