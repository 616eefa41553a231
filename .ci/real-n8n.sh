#!/usr/bin/env bash
# The real-n8n suite (test/real-n8n): the workflow runtime against a REAL n8n, once per supported line (2.8.4 and
# 2.41.1). n8n is installed with the workplace's real-n8n tool into a cache outside the clone (1.7-2.2 GB, minutes
# the first time), started on its own ports with a fresh data folder, given examples/n8n (the recovery probes and the
# examples that test/real-n8n/examples.test.ts runs), and stopped afterwards.
# Without the tool (a machine outside this workplace) the suite is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."

TOOLS="${REAL_N8N_TOOLS:-/work/shared/tools/real-n8n}"
CACHE="${REAL_N8N_CACHE:-$HOME/.cache/ars-real-n8n}"
if [ ! -x "$TOOLS/setup.sh" ]; then
  echo "== real n8n: skipped (no real-n8n tool at $TOOLS; set REAL_N8N_TOOLS)"
  exit 0
fi
# n8n runs on the Node its tool's profile is built and tested with — 2.8.4 on the machine's own, 2.41.1 on a Node 24
# the tool fetches — not on the Node that .ci/run puts first on PATH for the service and vitest: the tool compiles
# n8n's native modules against the machine's Node headers, and its cached installs were built with that Node.
# REAL_N8N_PATH is the PATH the tool gets (.ci/run passes the machine's); the suite itself keeps ours.
N8N_PATH="${REAL_N8N_PATH:-$PATH}"

run_version() {
  local version="$1" port="$2" dir="$CACHE/v$1"
  echo "== real n8n $version (port $port, install cached in $dir; the suite on node $(node --version))"
  mkdir -p "$dir"
  rm -rf "$dir/.n8n" "$dir/api-key.txt" # a fresh n8n: only our workflows, no executions of an earlier run
  local envs
  envs="$(PATH="$N8N_PATH" N8N_WORKFLOWS=examples/n8n N8N_REAL_VERSION="$version" N8N_REAL_PORT="$port" "$TOOLS/setup.sh" "$dir")"
  eval "$envs"
  local status=0
  # One file at a time: each starts the service as a process (PGlite start-up is CPU-heavy) beside n8n, and the
  # recovery suite's kills and restarts should not share two cores with the examples' runs.
  REAL_N8N_URL="$N8N_URL" REAL_N8N_API_KEY="$N8N_API_KEY" REAL_N8N_VERSION="$version" \
    npx vitest run --no-file-parallelism test/real-n8n || status=$?
  PATH="$N8N_PATH" "$TOOLS/stop.sh" "$dir" >/dev/null 2>&1 || true
  return "$status"
}

run_version 2.8.4 5790
run_version 2.41.1 5792
