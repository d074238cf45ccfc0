# syntax=docker/dockerfile:1
# ldbroker: multi-stage build on Node 20 / Debian 12; the broker runs as a non-root user on port 1026, tuned for a
# workload at build time (seed 001 §4.4, tune/README.md):
#   docker build --build-arg WORKLOAD=workloads/iot-feed.json -t ldbroker .      (runs the tune, about 15 minutes)
#   docker build --build-arg TUNE_RESULT=workloads/my-tune-result.json -t ldbroker .   (a result made beforehand)
# The winner is recorded in /app/tune.env (TUNE_DBLOCKPREFER, TUNE_ALLOCATOR, the trained options); only the
# winning allocator is installed; docker/entrypoint.sh applies them unless the operator sets the same variables.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-fund --no-audit
COPY tsconfig.json ./
COPY src ./src
COPY workers ./workers
COPY bench ./bench
COPY tune ./tune
RUN npm run build

# The tuning: it measures brokers on the loopback, with both alternative allocators to compare.
FROM build AS tune
# hadolint ignore=DL3008
RUN apt-get update && apt-get install -y --no-install-recommends libjemalloc2 libmimalloc2.0 \
    && rm -rf /var/lib/apt/lists/*
COPY workloads ./workloads
ARG WORKLOAD=workloads/smart-city.json
ARG TUNE_RESULT=
ARG TUNE_REPEATS=2
ARG TUNE_TRAIN_DURATION=20
RUN if [ -n "$TUNE_RESULT" ]; then cp "$TUNE_RESULT" tune-result.json; \
    else TUNE_REPEATS="$TUNE_REPEATS" TUNE_TRAIN_DURATION="$TUNE_TRAIN_DURATION" node dist/tune/tune.js "$WORKLOAD" --out tune-result.json; fi \
    && node dist/tune/record.js tune-result.json > tune.env \
    && cat tune.env

FROM build AS modules
RUN npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=tune /app/tune.env /app/tune-result.json ./
# Only the winning allocator (system: nothing to install).
# hadolint ignore=DL3008,SC1091
RUN . ./tune.env \
    && case "$TUNE_ALLOCATOR" in jemalloc) pkg=libjemalloc2 ;; mimalloc) pkg=libmimalloc2.0 ;; *) pkg= ;; esac \
    && if [ -n "$pkg" ]; then apt-get update && apt-get install -y --no-install-recommends "$pkg" && rm -rf /var/lib/apt/lists/*; fi
RUN groupadd --system ldbroker && useradd --system --gid ldbroker --home-dir /app ldbroker \
    && mkdir -p /data && chown ldbroker:ldbroker /data
COPY --from=modules --chown=ldbroker:ldbroker /app/node_modules ./node_modules
COPY --from=build --chown=ldbroker:ldbroker /app/dist ./dist
COPY --chown=ldbroker:ldbroker package.json ./
COPY docker/entrypoint.sh /usr/local/bin/ldbroker-entrypoint
# The importer beside the broker (seed 001 §4.3): `docker run ... ldbroker ldbroker-import --file /stream.ndjson`.
RUN chmod +x dist/src/main.js dist/src/import-main.js /usr/local/bin/ldbroker-entrypoint \
    && ln -s /app/dist/src/import-main.js /usr/local/bin/ldbroker-import
USER ldbroker
EXPOSE 1026
ENTRYPOINT ["/usr/local/bin/ldbroker-entrypoint"]
CMD ["--port", "1026"]
