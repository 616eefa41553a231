// `npm run runtime:fake`: a local stand-in for Trigger.dev (the same fake the tests use, speaking its real API) so
// the README walk-through can trigger a run and watch it complete without a Trigger.dev account.
// Its task "summarize" starts a second after a trigger and returns its result two seconds later.
import { TriggerDevFake } from '../test/fakes/trigger-dev-fake.ts';

const port = Number(process.env.FAKE_TRIGGER_PORT || 3030);
const fake = new TriggerDevFake({ secretKey: 'tr_dev_walkthrough' });
fake.registerTask('summarize', (run) => {
  const input = (run.payload as { input?: { text?: unknown } } | undefined)?.input;
  const text = typeof input?.text === 'string' ? input.text : '';
  setTimeout(() => fake.setRun(run.id, { status: 'EXECUTING', startedAt: new Date() }), 1_000);
  setTimeout(() => fake.completeRun(run.id, { summary: text.slice(0, 40), words: text.split(/\s+/).filter(Boolean).length, outputs: 1 }), 3_000);
});
await fake.start(port);
console.log(`fake Trigger.dev listening on ${fake.url} (secret key tr_dev_walkthrough, task "summarize"); Ctrl-C stops it`);
const stop = () => void fake.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
