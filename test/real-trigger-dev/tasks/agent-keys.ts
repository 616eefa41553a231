// Dev mode reads the project's environment variables once, when the worker starts; the agents (and their keys)
// are created later, by the tests. So each run reads them from a file beside the task project, which the tests
// write (agent-keys.json: {"<task id>": "<agent key>", "PAYMENTS_API_URL": "…"}), and the example task finds its
// ARS_AGENT_API_KEY and PAYMENTS_API_URL in its environment as it would in a deployed project.
import { readFileSync } from 'node:fs';
import path from 'node:path';

const FILE = path.join(process.cwd(), 'agent-keys.json');

export function agentKeys(): Record<string, string> {
  try {
    return JSON.parse(readFileSync(FILE, 'utf8')) as Record<string, string>;
  } catch {
    return {};
  }
}

const keys = agentKeys();
if (keys['review-refund']) process.env.ARS_AGENT_API_KEY = keys['review-refund'];
if (keys.PAYMENTS_API_URL) process.env.PAYMENTS_API_URL = keys.PAYMENTS_API_URL;
