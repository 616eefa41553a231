// `npm run bench:seed`: seeds the scale scenario's database (bench/scenarios/scale/) and nothing else, so a long
// seed (ten million runs by default, BENCH_SCALE_RUNS) can run ahead of `npm run bench`, which then finds it done.
import { prepareScaleDatabase } from './scenarios/scale/database.ts';

const server = process.env.BENCH_DATABASE_URL || process.env.TEST_DATABASE_URL;
if (!server) {
  console.error('set BENCH_DATABASE_URL (or TEST_DATABASE_URL) to a PostgreSQL server');
  process.exit(1);
}
prepareScaleDatabase(server).then(
  ({ seeded }) => console.log(seeded),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
