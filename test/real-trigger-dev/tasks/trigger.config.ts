// The task project the real-Trigger.dev suite runs (.ci/real-trigger-dev.sh copies this folder, with the
// examples/trigger-dev task, to a folder outside the clone and starts the CLI's dev worker there).
import { defineConfig } from '@trigger.dev/sdk';

export default defineConfig({
  project: process.env.TRIGGER_PROJECT_REF ?? 'proj_rrkpdguyagvsoktglnod',
  dirs: ['./src/trigger'],
  maxDuration: 300,
  retries: { enabledInDev: false, default: { maxAttempts: 1 } },
});
