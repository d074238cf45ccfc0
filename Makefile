# ldbroker: `make run` installs, builds and starts the broker on the embedded store (port 1026);
# `make test` installs, builds, starts the servers the tests need and runs every test.
SHELL := /bin/bash
NPM ?= npm
PORT ?= 1026
ARGS ?=

.PHONY: install build run test test-unit test-api bench bench-smoke lint format clean conformance

# `npm ci`: exactly the locked versions, on npm 10 and 11 alike.
node_modules/.install-stamp: package.json package-lock.json
	$(NPM) ci --no-fund --no-audit --loglevel=error
	touch $@

install: node_modules/.install-stamp

# FEATURES=noauth leaves the authorization code out of the build (seed 000 §1).
FEATURES ?=
build: install
	$(NPM) run --silent build
	$(if $(FEATURES),node dist/src/build/features.js $(FEATURES))

run: build
	node dist/src/main.js --port $(PORT) $(ARGS)

# Types (tsc --noEmit), ESLint (the recommended rules that hold here and the layer rules, eslint.config.js) and the
# format (Prettier, .prettierrc.json: `make format` writes it).
PRETTIER_FILES = "src/**/*.ts" "workers/**/*.ts" "test/**/*.ts" "bench/**/*.ts" "*.js"
lint: install
	npx tsc -p tsconfig.json --noEmit
	npx eslint src workers
	npx prettier --check $(PRETTIER_FILES)

format: install
	npx prettier --write --log-level warn $(PRETTIER_FILES)

# Every test: tap (unit, api, integration) and the exporter's pytest suite against real servers.
test: build
	bash test/run-all.sh

test-unit: build
	npx tap test/unit

test-api: build
	npx tap test/api

# The entity and query scenarios write bench/RESULTS.md; the in-process query, auth, temporal and subscription
# benchmarks add their sections to it.
bench: build
	node dist/bench/run.js
	node dist/bench/query-store.js
	node dist/bench/auth.js
	node dist/bench/auth-ngsild.js
	node dist/bench/temporal.js
	node dist/bench/distributed.js
	node dist/bench/scenarios/subscriptions.js

# The ETSI NGSI-LD test suite against a broker built from this tree (conformance/README.md); fetches nothing.
ETSI_ARGS ?=
conformance: build
	ETSI_SUITE="$(ETSI_SUITE)" bash conformance/run.sh $(ETSI_ARGS)

bench-smoke: build
	node dist/bench/run.js --smoke

clean:
	rm -rf dist .tap
