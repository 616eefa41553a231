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

run_version() {
  local version="$1" port="$2" dir="$CACHE/v$1"
  echo "== real n8n $version (port $port, install cached in $dir)"
  mkdir -p "$dir"
  rm -rf "$dir/.n8n" "$dir/api-key.txt" # a fresh n8n: only our workflows, no executions of an earlier run
  local envs
  envs="$(N8N_WORKFLOWS=examples/n8n N8N_REAL_VERSION="$version" N8N_REAL_PORT="$port" "$TOOLS/setup.sh" "$dir")"
  eval "$envs"
  local status=0
  # One file at a time: each starts the service as a process (PGlite start-up is CPU-heavy) beside n8n, and the
  # recovery suite's kills and restarts should not share two cores with the examples' runs.
  REAL_N8N_URL="$N8N_URL" REAL_N8N_API_KEY="$N8N_API_KEY" REAL_N8N_VERSION="$version" \
    npx vitest run --no-file-parallelism test/real-n8n || status=$?
  "$TOOLS/stop.sh" "$dir" >/dev/null 2>&1 || true
  return "$status"
}

run_version 2.8.4 5790
run_version 2.41.1 5792
