# syntax=docker/dockerfile:1
# S4: one image for every role. The role is chosen at run time with S4_ROLE (all | api | segment,
# later aggregate | ingest); configuration comes from S4_* variables (docs/configuration.md).
#
#   docker build -t s4 .
#   docker run --rm -p 8080:8080 s4                        # embedded mode: everything in one process
#   docker run --rm -e S4_ROLE=api -e S4_REDIS_URL=rediss://... -e S4_S3_BUCKET=... s4
#
# The build context is the repository root, filtered by .dockerignore.

ARG NODE_VERSION=24

# ---- build: every dependency, compile the TypeScript project references
FROM node:${NODE_VERSION}-bookworm-slim AS build
# A toolchain in case a native addon (msgpackr-extract) has no prebuilt binary for the platform.
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /src
COPY . .
RUN --mount=type=cache,target=/root/.npm npm ci --no-audit --no-fund
RUN npm run build
# Collect what the runtime needs: each workspace's package.json and dist/, nothing else.
RUN mkdir -p /out /manifests \
 && cp package.json package-lock.json /manifests/ \
 && for f in libs/*/package.json apps/*/package.json infra/package.json; do \
      d="$(dirname "$f")"; mkdir -p "/manifests/$d" "/out/$d"; cp "$f" "/manifests/$f"; cp "$f" "/out/$f"; \
      if [ -d "$d/dist" ]; then cp -r "$d/dist" "/out/$d/dist"; fi; \
    done \
 && find /out -name '*.tsbuildinfo' -delete

# ---- prod-deps: production dependencies only (npm ci --omit=dev), resolved from the lockfile
FROM node:${NODE_VERSION}-bookworm-slim AS prod-deps
RUN apt-get update \
 && apt-get install -y --no-install-recommends python3 make g++ \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY --from=build /manifests/ ./
RUN --mount=type=cache,target=/root/.npm npm ci --omit=dev --no-audit --no-fund \
 && rm -rf infra

# ---- runtime: compiled code + production node_modules, non-root, no compilers, no npm cache
FROM node:${NODE_VERSION}-bookworm-slim AS runtime
ENV NODE_ENV=production \
    S4_HOST=0.0.0.0 \
    S4_PORT=8080 \
    S4_DATA_DIR=/data
WORKDIR /app
# Owned by root and read-only to the service user.
COPY --from=prod-deps /app/ ./
COPY --from=build /out/ ./
RUN rm -rf infra && mkdir -p /data && chown node:node /data
# The unprivileged `node` user (uid/gid 1000) of the base image.
USER node
VOLUME ["/data"]
EXPOSE 8080
# Liveness probe on GET /healthz (Node 24 has fetch; the image carries no curl).
HEALTHCHECK --interval=30s --timeout=5s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.S4_PORT||8080)+'/healthz').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
STOPSIGNAL SIGTERM
CMD ["node", "apps/api/dist/main.js"]
