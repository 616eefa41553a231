// npm's `prepare` (after `npm install` / `npm ci`): runs the production build (scripts/build.ts) when dist/ or
// console/dist is missing or older than its sources, so a fresh clone's `npm install && npm start` serves the
// built service and its console, while `npm start` itself never compiles. Plain JavaScript: with dev dependencies
// omitted there is no tsx, no TypeScript and no Vite, and this only says so (the container image builds in a stage
// of its own and installs its production dependencies with --ignore-scripts).
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import process from 'node:process';
import console from 'node:console';

const root = path.resolve(import.meta.dirname, '..');

/** The newest modification time among a file or a folder's files (recursively). */
function newest(p) {
  if (!existsSync(p)) return 0;
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(p).map((name) => newest(path.join(p, name))));
}
const builtAt = (file) => (existsSync(file) ? statSync(file).mtimeMs : 0);
const bin = (name) => path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? `${name}.cmd` : name);

if (!existsSync(path.join(root, 'src', 'server.ts'))) process.exit(0); // installed without the sources: nothing to build
if (!existsSync(bin('tsc')) || !existsSync(bin('vite')) || !existsSync(bin('tsx'))) {
  console.warn('prepare: dev dependencies are not installed, so nothing is built; `npm start` needs `npm run build` (with them) first');
  process.exit(0);
}
const service = builtAt(path.join(root, 'dist', 'server.js')) >= Math.max(newest(path.join(root, 'src')), newest(path.join(root, 'tsconfig.json')));
const consoleDir = path.join(root, 'console');
const consoleSources = ['src', 'index.html', 'vite.config.ts', 'tsconfig.json'].map((p) => newest(path.join(consoleDir, p)));
const consoleBuilt = builtAt(path.join(consoleDir, 'dist', 'index.html')) >= Math.max(...consoleSources);
if (service && consoleBuilt) {
  console.log('prepare: dist/ and console/dist are up to date');
} else {
  // The service alone when only it is stale; scripts/build.ts builds both otherwise.
  const args = ['scripts/build.ts', ...(consoleBuilt ? ['service'] : service ? ['console'] : [])];
  const result = spawnSync(bin('tsx'), args, { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
