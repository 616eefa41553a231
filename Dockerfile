# The Agent Run Service as a container image (docs/operations.md). Built and smoke-tested by CI (.ci/image.sh):
#   docker build -t agent-run-service .
#   docker run -p 8080:8080 -v ars-data:/data agent-run-service          # embedded PGlite in the /data volume
#   docker run -p 8080:8080 -e DATABASE_URL=postgres://… -e ARS_MASTER_KEY=… -e ARS_ADMIN_TOKEN=… agent-run-service
# Stopping: `node` is PID 1 and drains on SIGTERM (held runtime calls get ARS_SHUTDOWN_GRACE_MS, 30 s by default,
# and the process exits at most 5 s after it). Give `docker stop -t` / `podman stop -t` /
# terminationGracePeriodSeconds more than grace + 5 s, e.g. `docker stop -t 40`; Docker's default 10 s would cut the
# drain short with SIGKILL.
#
# NODE_IMAGE: the public node:24-bookworm-slim by default; a machine without a registry passes its own (.ci/image.sh).
# The service supports Node 22 (from 22.19) and 24 (`engines`); CI builds the image on 24 only.
# No `# syntax=` line on purpose: BuildKit would have to pull that frontend image.
ARG NODE_IMAGE=node:24-bookworm-slim

# --- build: every dependency of the root package (not the workspaces': the SDK and the Trigger.dev example are not
# part of the service), the service compiled to dist/ and the console to console/dist.
FROM ${NODE_IMAGE} AS build
WORKDIR /src
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY examples/trigger-dev/package.json examples/trigger-dev/
# npm_ca: an optional build secret holding a CA bundle for a registry reached through a TLS-inspecting proxy; it is
# read by this step only and nothing of it stays in a layer.
RUN --mount=type=secret,id=npm_ca \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
 && npm ci --workspaces=false --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY scripts/build.ts scripts/
COPY src src
COPY console console
RUN npx tsx scripts/build.ts && rm -f dist/*.map dist/*/*.map dist/*/*/*.map

# --- production dependencies only, with what no running service reads (type declarations, source maps, readmes,
# tests) removed: the image stays under 250 MB (CI prints its size).
FROM ${NODE_IMAGE} AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY packages/sdk/package.json packages/sdk/
COPY examples/trigger-dev/package.json examples/trigger-dev/
RUN --mount=type=secret,id=npm_ca \
    if [ -s /run/secrets/npm_ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/npm_ca; fi \
 && npm ci --omit=dev --workspaces=false --ignore-scripts --no-audit --no-fund \
 && find node_modules -type f \( -name '*.map' -o -name '*.d.ts' -o -name '*.d.mts' -o -name '*.d.cts' -o -name '*.md' \) -delete \
 && find node_modules -depth -type d \( -name test -o -name tests -o -name __tests__ -o -name benchmark -o -name benchmarks -o -name .github \) -exec rm -rf {} + \
 && rm -rf node_modules/.package-lock.json

# --- the runtime filesystem: Node without its package managers (npm, npx, corepack, yarn: nothing at run time
# installs anything), the service, its console and its production dependencies.
FROM ${NODE_IMAGE} AS runtime
RUN rm -rf /usr/local/lib/node_modules /usr/local/bin/npm /usr/local/bin/npx /usr/local/bin/corepack \
      /usr/local/bin/yarn /usr/local/bin/yarnpkg /opt/yarn-* /usr/local/include/node /usr/local/share/doc /usr/local/share/man \
      /root/.npm /tmp/* \
 && mkdir -p /data /app \
 && chown 1000:1000 /data && chmod 0700 /data
COPY package.json /app/
COPY --from=deps /app/node_modules /app/node_modules
COPY --from=build /src/dist /app/dist
COPY --from=build /src/console/dist /app/console/dist

# --- the image: that filesystem as one layer (the package managers removed above are then really gone, not only
# hidden under a later layer), run as the unprivileged `node` user (uid 1000) with `node` itself as PID 1. The
# service starts no child process, so PID 1 has no orphans to reap and needs no init (`docker run --init` adds
# one for anything you `exec` into the container that does).
FROM scratch
COPY --from=runtime / /
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    NODE_ENV=production \
    HOST=0.0.0.0 \
    PORT=8080 \
    ARS_DATA_DIR=/data
WORKDIR /app
USER 1000:1000
# The embedded database, its generated master key and admin token (unused with DATABASE_URL). One container per
# volume: a second one on the same volume refuses to start.
VOLUME /data
EXPOSE 8080
STOPSIGNAL SIGTERM
# /livez: the process answers (readiness, /readyz, is for load balancers and Kubernetes). No curl in the image:
# node's own fetch.
HEALTHCHECK --interval=15s --timeout=5s --start-period=60s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||8080)+'/livez').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
CMD ["node", "dist/server.js"]
