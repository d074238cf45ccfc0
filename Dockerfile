# syntax=docker/dockerfile:1
# ldbroker: multi-stage build on Node 20 / Debian 12; the broker runs as a non-root user on port 1026.
FROM node:20-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --no-fund --no-audit
COPY tsconfig.json ./
COPY src ./src
COPY workers ./workers
COPY bench ./bench
COPY tune ./tune
RUN npm run build && npm prune --omit=dev

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
RUN groupadd --system ldbroker && useradd --system --gid ldbroker --home-dir /app ldbroker \
    && mkdir -p /data && chown ldbroker:ldbroker /data
COPY --from=build --chown=ldbroker:ldbroker /app/node_modules ./node_modules
COPY --from=build --chown=ldbroker:ldbroker /app/dist ./dist
COPY --chown=ldbroker:ldbroker package.json ./
# The importer beside the broker (seed 001 §4.3): `docker run --entrypoint ldbroker-import ... --file /stream.ndjson`.
RUN chmod +x dist/src/main.js dist/src/import-main.js && ln -s /app/dist/src/import-main.js /usr/local/bin/ldbroker-import
USER ldbroker
EXPOSE 1026
ENTRYPOINT ["node", "dist/src/main.js"]
CMD ["--port", "1026"]
