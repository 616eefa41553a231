#!/usr/bin/env bash
# CI, the container image (issue 37): build it with podman from the Dockerfile as it is, print its size and fail
# above 250 MB, then smoke-test it (test/image/image.test.ts): on PGlite in a volume and on the machine's
# PostgreSQL, host network. No image registry is reachable here: .ci/oci-setup.sh makes podman work and builds local
# stand-ins for the public base images, its state in ~/.cache/oci-local (first run about 2 minutes, then seconds);
# the build takes the local node:24-bookworm-slim through NODE_IMAGE, as `docker build .` takes the public one.
set -euo pipefail
cd "$(dirname "$0")/.."

MAX_IMAGE_BYTES=$((250 * 1000 * 1000))
IMAGE="localhost/agent-run-service:ci-$$"
PG_BASE="${CI_POSTGRES_URL:-postgres://postgres@127.0.0.1:5432}"
IMAGE_DB="ars_image_$(date +%s)_$$"

echo "== container tooling (.ci/oci-setup.sh, state in ~/.cache/oci-local)"
eval "$(bash .ci/oci-setup.sh)"

cleanup() {
  podman rmi -f "$IMAGE" >/dev/null 2>&1 || true
  podman image prune -f >/dev/null 2>&1 || true # the build's intermediate stages
  psql "${PG_BASE}/postgres" -qc "DROP DATABASE IF EXISTS ${IMAGE_DB} WITH (FORCE)" >/dev/null 2>&1 || true
}
trap cleanup EXIT

echo "== image build (podman, NODE_IMAGE=${NODE_IMAGE})"
start=$(date +%s)
podman build --format docker --network host --build-arg NODE_IMAGE="$NODE_IMAGE" \
  --secret id=npm_ca,src="$CA_BUNDLE" -t "$IMAGE" . >/tmp/ars-image-build-$$.log 2>&1 \
  || { tail -40 /tmp/ars-image-build-$$.log; rm -f /tmp/ars-image-build-$$.log; exit 1; }
rm -f /tmp/ars-image-build-$$.log
size=$(podman image inspect "$IMAGE" --format '{{.Size}}')
echo "image $IMAGE built in $(( $(date +%s) - start )) s: $(( size / 1000000 )) MB ($size bytes; the limit is $(( MAX_IMAGE_BYTES / 1000000 )) MB)"
if [ "$size" -gt "$MAX_IMAGE_BYTES" ]; then
  echo "the image is larger than $(( MAX_IMAGE_BYTES / 1000000 )) MB" >&2
  exit 1
fi

echo "== image smoke test (test/image, PGlite in a volume and PostgreSQL ${PG_BASE}/${IMAGE_DB})"
psql "${PG_BASE}/postgres" -v ON_ERROR_STOP=1 -qc "CREATE DATABASE ${IMAGE_DB}"
ARS_IMAGE="$IMAGE" ARS_IMAGE_DATABASE_URL="${PG_BASE}/${IMAGE_DB}" npx vitest run test/image --maxWorkers=1
