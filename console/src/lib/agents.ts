// The agents the user can see, loaded once per page for names in run lists and filter choices.
import { api, unwrap, type Agent } from '../api/client.ts';
import { useLoad } from './useLoad.ts';

export function useAgents() {
  return useLoad(() => unwrap(api.GET('/api/admin/agents', { params: { query: { limit: '200' } } })).then((p) => p.data), []);
}

export function agentName(agents: Agent[] | undefined, id: number): string {
  return agents?.find((a) => a.id === id)?.name ?? `Agent ${id}`;
}
