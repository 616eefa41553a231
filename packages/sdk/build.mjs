// The SDK's dual build (docs/decisions.md "The SDK as a package"): the same sources compiled twice by tsc, to
// dist/esm (ES modules, this package's "type") and dist/cjs (CommonJS, marked so by its own package.json), each
// with its declarations, so `import` and `require` — and TypeScript under node16 or bundler resolution — each get
// JavaScript and types of their own format. dist/ is emptied first: a file removed from src/ must not linger there.
import { execFileSync } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import process from 'node:process';
import { URL } from 'node:url';

const here = new URL('.', import.meta.url);
const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');

rmSync(new URL('dist', here), { recursive: true, force: true });
for (const config of ['tsconfig.build.json', 'tsconfig.cjs.json']) {
  execFileSync(process.execPath, [tsc, '-p', config], { cwd: here, stdio: 'inherit' });
}
mkdirSync(new URL('dist/cjs', here), { recursive: true });
writeFileSync(new URL('dist/cjs/package.json', here), `${JSON.stringify({ type: 'commonjs' })}\n`);
