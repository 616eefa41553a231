import { defineConfig } from '@trigger.dev/sdk';

export default defineConfig({
  // Your project's ref, from the Trigger.dev dashboard.
  project: 'proj_your_project_ref',
  dirs: ['./src/trigger'],
  // A review may wait for a day: waiting on a token does not count towards this (Trigger.dev checkpoints the run).
  maxDuration: 300,
});
