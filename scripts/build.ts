// `npm run build`: the production build. The service's TypeScript compiled to dist/ (plain JavaScript that `node`
// runs: `npm start`, the container image), its SQL migrations beside it, and the console built into console/dist.
// Development needs none of it: `npm run dev` runs the sources through tsx.
import { spawnSync } from 'node:child_process';
import { cpSync, rmSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const bin = (name: string) => path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);

function run(what: string, command: string, args: string[]): void {
  console.log(`build: ${what}`);
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

const only = process.argv[2]; // "service" or "console": one of the two (scripts/prepare.mjs, when only it is stale)
if (only !== 'console') {
  rmSync(path.join(root, 'dist'), { recursive: true, force: true }); // no module deleted from src/ outlives it in dist/
  run('the service (tsc -p tsconfig.build.json -> dist/)', bin('tsc'), ['-p', 'tsconfig.build.json']);
  cpSync(path.join(root, 'src', 'storage', 'migrations'), path.join(root, 'dist', 'storage', 'migrations'), { recursive: true });
}
if (only !== 'service') run('the console (vite build console -> console/dist/)', bin('vite'), ['build', 'console', '--logLevel', 'warn']);
