// npm's `prepare` (after `npm install`): builds the console when console/dist is missing or older than its
// sources, so a fresh clone's `npm install && npm start` serves it, while `npm start` itself never builds.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';

const root = path.resolve(import.meta.dirname, '..');
const consoleDir = path.join(root, 'console');
const built = path.join(consoleDir, 'dist', 'index.html');

/** The newest modification time among a file or a folder's files (recursively). */
function newest(p: string): number {
  if (!existsSync(p)) return 0;
  const s = statSync(p);
  if (!s.isDirectory()) return s.mtimeMs;
  return Math.max(0, ...readdirSync(p).map((name) => newest(path.join(p, name))));
}

const sources = ['src', 'index.html', 'vite.config.ts', 'tsconfig.json'].map((p) => newest(path.join(consoleDir, p)));
const builtAt = existsSync(built) ? statSync(built).mtimeMs : 0;
const vite = path.join(root, 'node_modules', '.bin', process.platform === 'win32' ? 'vite.cmd' : 'vite');

if (!existsSync(path.join(consoleDir, 'index.html'))) {
  // Installed as a dependency or without the console's sources: nothing to build.
} else if (builtAt >= Math.max(...sources)) {
  console.log('console: console/dist is up to date');
} else if (!existsSync(vite)) {
  // `npm install --omit=dev`: no Vite. The service still starts; the console answers 503 naming the build.
  console.warn('console: Vite is not installed (dev dependencies omitted); run `npm run console:build` to build the console');
} else {
  console.log('console: building console/dist');
  const result = spawnSync(vite, ['build', consoleDir, '--logLevel', 'warn'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) process.exit(result.status ?? 1);
}
