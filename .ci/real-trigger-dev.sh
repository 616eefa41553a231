#!/usr/bin/env bash
# The real-Trigger.dev suite (test/real-trigger-dev): the task runtime against a REAL self-hosted Trigger.dev,
# built from its source by the workplace's real-trigger-dev tool (webapp, private PostgreSQL and Redis, an object
# store for outputs of 128 KiB or more, the CLI's dev worker as the task executor), once per release in
# REAL_TRIGGER_DEV_REFS (default v4.4.3). v4.4.3 is the last release whose runs list (recovery by tag) works
# without ClickHouse; v4.5.x serves that list only from ClickHouse, which cannot be installed here, so on it the
# suite checks that recovery degrades with the reason instead. The releases share the tool's ports: one at a time.
# Each build is cached outside the clone (/var/tmp/real-trigger-dev/<ref>: minutes cold, about 30 s warm on an
# idle machine). The task project (this suite's probes and the examples/trigger-dev task) is assembled beside it,
# in <state>/ars-tasks. Everything started is stopped after.
# Without the tool (a machine outside this workplace) the suite is skipped, saying so.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"

REFS="${REAL_TRIGGER_DEV_REFS:-v4.4.3}"
TOOLS="${REAL_TRIGGER_DEV_TOOLS:-/work/shared/tools/real-trigger-dev}"
if [ ! -f "$TOOLS/setup.sh" ]; then
  echo "== real Trigger.dev: skipped (no real-trigger-dev tool at $TOOLS; set REAL_TRIGGER_DEV_TOOLS)"
  exit 0
fi
[ -f packages/sdk/dist/esm/index.js ] || npm run --silent build -w packages/sdk
# The service under test keeps its data on the machine's PostgreSQL (a database per suite, dropped after): PGlite's
# start-up is CPU-heavy, and this suite shares two cores with Trigger.dev's webapp and worker.
export TEST_DATABASE_URL="${TEST_DATABASE_URL:-${CI_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}/postgres}"

REF="" STATE="" TASKS=""
tool() { TRIGGER_REF="$REF" TDREAL="$STATE" TASKS_DIR="$TASKS" bash "$TOOLS/setup.sh" "$@"; }
stop_current() { [ -z "$REF" ] || tool stop >/dev/null 2>&1 || true; }
trap stop_current EXIT

# The task project: our probes, the example's task and logic (its SDK linked from packages/sdk, built), and
# agent-keys.ts imported first by the example so that it finds its agent key (agent-keys.ts says why).
assemble_tasks() {
  mkdir -p "$TASKS/src/trigger"
  rm -f "$TASKS"/src/trigger/*.ts "$TASKS"/src/*.ts "$TASKS/agent-keys.json"
  cp test/real-trigger-dev/tasks/trigger.config.ts "$TASKS/"
  cp test/real-trigger-dev/tasks/agent-keys.ts test/real-trigger-dev/tasks/probes.ts "$TASKS/src/trigger/"
  cp examples/trigger-dev/src/review-refund.ts "$TASKS/src/"
  { echo "import './agent-keys.ts';"; cat examples/trigger-dev/src/trigger/review-refund.ts; } > "$TASKS/src/trigger/review-refund.ts"
  # The tool installs the CLI and SDK at the server's version into it (npm keeps the linked SDK as listed).
  if ! grep -q "file:$ROOT/packages/sdk" "$TASKS/package.json" 2>/dev/null; then
    echo "{ \"name\": \"ars-real-trigger-dev-tasks\", \"private\": true, \"type\": \"module\", \"dependencies\": { \"@agent-run-service/sdk\": \"file:$ROOT/packages/sdk\" } }" > "$TASKS/package.json"
    rm -rf "$TASKS/node_modules" "$TASKS/package-lock.json"
  fi
}

run_ref() {
  REF="$1"
  STATE="${REAL_TRIGGER_DEV_STATE_BASE:-/var/tmp/real-trigger-dev}/$REF"
  TASKS="$STATE/ars-tasks"
  assemble_tasks
  echo "== real Trigger.dev $REF (state in $STATE, tasks in $TASKS)"
  # A dev worker left running serves another task folder: start from a stopped set (the build stays).
  tool stop >/dev/null 2>&1 || true
  local started status=0
  started=$(date +%s)
  if ! tool all > "$STATE.ci-setup.log" 2>&1; then
    tail -40 "$STATE.ci-setup.log"
    return 1
  fi
  echo "== real Trigger.dev $REF up in $(( $(date +%s) - started )) s"
  # shellcheck disable=SC1091
  set -a; source "$STATE/credentials.env"; set +a
  REAL_TRIGGER_DEV_URL="$TRIGGER_API_URL" REAL_TRIGGER_DEV_SECRET_KEY="$TRIGGER_SECRET_KEY" \
    REAL_TRIGGER_DEV_ACCESS_TOKEN="$TRIGGER_ACCESS_TOKEN" REAL_TRIGGER_DEV_PROJECT_REF="$TRIGGER_PROJECT_REF" \
    REAL_TRIGGER_DEV_VERSION="$REF" REAL_TRIGGER_DEV_TASKS="$TASKS" \
    REAL_TRIGGER_DEV_DB="postgresql://postgres@127.0.0.1:${PG_PORT:-5442}/tdreal_main" \
    npx vitest run --no-file-parallelism test/real-trigger-dev || status=$?
  tool stop >/dev/null 2>&1 || true
  return "$status"
}

for ref in $REFS; do run_ref "$ref"; done
