#!/usr/bin/env bash
# The SDK as a stranger gets it (issue 38 item 5): `npm pack` of packages/sdk (built to dist/ by the step before),
# arethetypeswrong on the tarball (every resolution: node10, node16 from ESM and from CJS, bundler), then the
# tarball installed into a fresh project outside the clone and used from ESM (import), CommonJS (require) and
# TypeScript (tsc: module node16 from both formats, and bundler resolution), on every Node CI has; last, a browser
# bundle of the root entry must build (no Node built-in in it) and one of the webhooks subpath must not.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
TSC="$ROOT/node_modules/typescript/bin/tsc"
ESBUILD="$ROOT/node_modules/.bin/esbuild"

[ -f packages/sdk/dist/esm/index.js ] || npm run --silent build -w packages/sdk
WORK="$(mktemp -d "${TMPDIR:-/tmp}/ars-sdk-package.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

TARBALL="$WORK/$(npm pack ./packages/sdk --pack-destination "$WORK" --silent)"
echo "-- packed $(basename "$TARBALL"): $(tar -tzf "$TARBALL" | wc -l) files"
# Only dist/ and the files npm always adds: no sources, no build script, no tsconfig.
if tar -tzf "$TARBALL" | grep -vE '^package/(dist/|package\.json$|README\.md$|LICENSE$)'; then
  echo "the tarball holds files outside dist/ (above)" >&2
  exit 1
fi
echo "-- arethetypeswrong"
npx --no-install attw --no-color --format table-flipped "$TARBALL"

APP="$WORK/app"
mkdir -p "$APP"
cd "$APP"
echo '{ "name": "ars-sdk-consumer", "private": true }' > package.json
npm install --no-audit --no-fund --silent "$TARBALL"

# A delivery signed the way the service signs one (Standard Webhooks), for the verifier to accept.
cat > sign.cjs <<'EOF'
const { createHmac } = require('node:crypto');
const key = Buffer.from('c2RrLXBhY2thZ2UtY2hlY2sta2V5LTMyLWJ5dGVzISE=', 'base64');
exports.secret = `whsec_${key.toString('base64')}`;
exports.body = JSON.stringify({ run: { runId: 7, agentId: 1, status: 'completed' }, output: { ok: true } });
const ts = String(Math.floor(Date.now() / 1000));
const sig = createHmac('sha256', key).update(`msg_1.${ts}.${exports.body}`).digest('base64');
exports.headers = { 'webhook-id': 'msg_1', 'webhook-timestamp': ts, 'webhook-signature': `v1,${sig}` };
EOF
cat > esm.mjs <<'EOF'
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { AgentRunClient, AgentRunError, TaskClient, filenameOf } from '@agent-run-service/sdk';
import { verifyWebhookAction, WebhookVerificationError } from '@agent-run-service/sdk/webhooks';
const { secret, body, headers } = createRequire(import.meta.url)('./sign.cjs');
assert.equal(typeof new AgentRunClient({ baseUrl: 'http://x', ingestKey: 'k', agentId: 1 }).trigger, 'function');
assert.equal(filenameOf("attachment; filename*=UTF-8''r%C3%A9sum%C3%A9.pdf"), 'résumé.pdf');
assert.equal(new AgentRunError('m', 409, 'conflict', 'req').status, 409);
assert.equal(TaskClient.fromPayload({ runId: 3, input: {}, serviceUrl: 'http://x', callbackUrl: 'http://x/cb', deploymentId: 'd' }, { agentKey: 'a' }).runId, 3);
assert.equal(verifyWebhookAction(secret, headers, body).run.runId, 7);
assert.throws(() => verifyWebhookAction(secret, headers, body.replace('true', 'false')), WebhookVerificationError);
console.log('   ESM import: ok');
EOF
cat > cjs.cjs <<'EOF'
const assert = require('node:assert/strict');
const { AgentRunClient, AgentRunError, filenameOf } = require('@agent-run-service/sdk');
const { verifyWebhookAction, WebhookVerificationError } = require('@agent-run-service/sdk/webhooks');
const { secret, body, headers } = require('./sign.cjs');
assert.equal(typeof new AgentRunClient({ baseUrl: 'http://x', ingestKey: 'k', agentId: 1 }).triggerAndWait, 'function');
assert.equal(filenameOf('attachment; filename="a.csv"'), 'a.csv');
assert.ok(new AgentRunError('m', 500, 'internal', undefined) instanceof Error);
// The CommonJS build, not ESM reached through require(esm): the file loaded is dist/cjs.
assert.match(require.resolve('@agent-run-service/sdk'), /dist\/cjs\/index\.js$/);
assert.equal(verifyWebhookAction(secret, headers, body).id, 'msg_1');
assert.throws(() => verifyWebhookAction(secret, {}, body), (e) => e instanceof WebhookVerificationError && e.reason === 'headers');
console.log('   CJS require: ok');
EOF

# TypeScript: the root entry with the DOM's lib and no Node types (as a browser app compiles it), the webhooks
# subpath with Node's; from an ES module and from a CommonJS one under node16, and under bundler resolution.
mkdir -p ts
cat > ts/use.mts <<'EOF'
import { AgentRunClient, type TaskPayload, type WaitResult, type paths } from '@agent-run-service/sdk';
const client = new AgentRunClient({ baseUrl: 'http://x', ingestKey: 'k', agentId: 1 });
export const wait: () => Promise<WaitResult> = () => client.triggerAndWait({ company: 'Initech' });
export const payload: TaskPayload = { runId: 1, input: {}, serviceUrl: 'http://x', callbackUrl: 'http://x/cb', deploymentId: 'd' };
export type RunPath = paths['/api/admin/runs/{runId}']['get']['parameters']['path']['runId'];
export const id: RunPath = 42;
EOF
cat > ts/use.cts <<'EOF'
import { AgentRunError, type ErrorCode } from '@agent-run-service/sdk';
import type { WebhookAction } from '@agent-run-service/sdk/webhooks';
export const code: ErrorCode = 'idempotency_key_reused';
export const err = new AgentRunError('m', 422, code, undefined);
export type Run = WebhookAction['run']['status'];
EOF
cp ts/use.mts ts/bundled.ts
cat > ts/webhooks.mts <<'EOF'
import { verifyWebhookAction } from '@agent-run-service/sdk/webhooks';
export const check = (body: string, headers: Record<string, string>) => verifyWebhookAction('whsec_x', headers, body).run.runId;
EOF
tsconfig() { # name, compilerOptions (JSON members), files
  echo "{ \"compilerOptions\": { \"noEmit\": true, \"strict\": true, \"skipLibCheck\": false, \"target\": \"es2022\", $2 }, \"files\": $3 }" > "ts/$1.json"
  node "$TSC" -p "ts/$1.json"
}
tsconfig node16 '"module": "node16", "lib": ["es2022", "dom"], "types": []' '["use.mts", "use.cts"]'
tsconfig node16-webhooks '"module": "node16", "lib": ["es2022"], "types": ["node"], "typeRoots": ["'"$ROOT"'/node_modules/@types"]' '["webhooks.mts"]'
tsconfig bundler '"module": "esnext", "moduleResolution": "bundler", "lib": ["es2022", "dom"], "types": []' '["bundled.ts"]'
echo '   TypeScript (node16 ESM and CJS, bundler): ok'

# Every Node CI runs: this machine's, and those .ci/run keeps under ~/.cache (Node 24 is fetched there if absent).
NODE_PKG="node-linux-$([ "$(uname -m)" = x86_64 ] && echo x64 || echo arm64)"
if ! "$HOME/.cache/ars-node24/node_modules/$NODE_PKG/bin/node" --version 2>/dev/null | grep -q '^v24\.'; then
  npm install --prefix "$HOME/.cache/ars-node24" --no-save --no-audit --no-fund --silent "$NODE_PKG@24"
fi
for NODE in "$(command -v node)" "$HOME"/.cache/ars-node*/node_modules/"$NODE_PKG"/bin/node; do
  [ -x "$NODE" ] || continue
  echo "-- node $("$NODE" --version)"
  "$NODE" esm.mjs
  "$NODE" cjs.cjs
done

# A browser bundle: the root entry builds without Node; the webhooks subpath must not (else the check is blind).
echo "import { AgentRunClient } from '@agent-run-service/sdk'; console.log(AgentRunClient);" > browser.mjs
"$ESBUILD" browser.mjs --bundle --platform=browser --format=esm --log-level=error --outfile="$WORK/browser.js"
echo "import { verifyWebhookAction } from '@agent-run-service/sdk/webhooks'; console.log(verifyWebhookAction);" > browser-webhooks.mjs
if "$ESBUILD" browser-webhooks.mjs --bundle --platform=browser --format=esm --log-level=silent --outfile="$WORK/w.js"; then
  echo "a browser bundle of the webhooks subpath built: the browser check cannot see node:crypto" >&2
  exit 1
fi
echo "-- browser bundle of the root entry: $(wc -c < "$WORK/browser.js") bytes, no Node built-in"
