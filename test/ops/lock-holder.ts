// A process that takes a data folder's lock and keeps it until it is killed (test/ops/data-dir-lock.test.ts):
// prints "locked" once it holds it, or the refusal and exits 2.
import { lockDataDir } from '../../src/storage/data-dir-lock.ts';
import { StartupError } from '../../src/lib/startup-error.ts';

const dir = process.argv[2]!;
try {
  await lockDataDir(dir, (line) => console.log(line));
  console.log('locked');
  setInterval(() => {}, 60_000); // held until killed
} catch (err) {
  if (!(err instanceof StartupError)) throw err;
  console.log(err.message);
  process.exit(2);
}
