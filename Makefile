# ldbroker: `make run` installs, builds and starts the broker on the embedded store (port 1026);
# `make test` installs, builds, starts the servers the tests need and runs every test.
SHELL := /bin/bash
NPM ?= npm
PORT ?= 1026
ARGS ?=

.PHONY: install build run test test-unit test-api bench bench-smoke lint format clean conformance tune

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

# Types (tsc --noEmit), ESLint (the recommended rules that hold here and the layer rules, eslint.config.js), the
# format (Prettier, .prettierrc.json: `make format` writes it) and the Dockerfile (hadolint, installed from PyPI).
PRETTIER_FILES = "src/**/*.ts" "workers/**/*.ts" "test/**/*.ts" "bench/**/*.ts" "tune/**/*.ts" "*.js"
lint: install
	npx tsc -p tsconfig.json --noEmit
	npx eslint src workers
	npx prettier --check $(PRETTIER_FILES)
	bash test/services/hadolint.sh Dockerfile

format: install
	npx prettier --write --log-level warn $(PRETTIER_FILES)

# Every test: tap (unit, api, integration) and the exporter's pytest suite against real servers.
test: build
	bash test/run-all.sh

# docdb's tests need the MongoDB-wire server (FerretDB): started, or found running.
test-unit: build
	bash test/services/ferretdb.sh
	npx tap test/unit

test-api: build
	bash test/services/ferretdb.sh
	npx tap test/api

# The entity and query scenarios write bench/RESULTS.md; the in-process query, auth, temporal and subscription
# benchmarks and the MQTT and Modbus bridges' (they start test/services/mosquitto.sh and pymodbus.sh) add their
# sections to it.
bench: build
	bash test/services/ferretdb.sh
	node dist/bench/run.js
	node dist/bench/query-store.js
	node dist/bench/auth.js
	node dist/bench/auth-ngsild.js
	node dist/bench/temporal.js
	node dist/bench/temporal-tsdb.js
	node dist/bench/websocket.js
	node dist/bench/distributed.js
	node dist/bench/scenarios/subscriptions.js
	node dist/bench/scenarios/owner-notifications.js
	node dist/bench/scenarios/bridge-mqtt.js
	node dist/bench/scenarios/bridge-modbus.js
	node dist/bench/import.js
	node dist/bench/memory.js

# The ETSI NGSI-LD test suite against a broker built from this tree (conformance/README.md); fetches nothing.
ETSI_ARGS ?=
conformance: build
	ETSI_SUITE="$(ETSI_SUITE)" bash conformance/run.sh $(ETSI_ARGS)

# Build tuning (seed 001 §4.4, tune/README.md): trains the runtime profile on the workload, measures
# --dbLockPrefer reads|writes x allocators and writes tune-result.json (about 15 minutes with the defaults). Knobs:
# TUNE_REPEATS (2), TUNE_TRAIN_DURATION (20 s per trial), TUNE_WARMUP (5 s), TUNE_BROKER_CPUS, TUNE_LOAD_CPUS,
# TUNE_TRAIN_KNOBS (the knobs trained, default all).
WORKLOAD ?= workloads/smart-city.json
TUNE_OUT ?= tune-result.json
export TUNE_REPEATS TUNE_TRAIN_DURATION TUNE_WARMUP TUNE_BROKER_CPUS TUNE_LOAD_CPUS TUNE_TRAIN_KNOBS
tune: build
	node dist/tune/tune.js $(WORKLOAD) --out $(TUNE_OUT)

bench-smoke: build
	node dist/bench/run.js --smoke

clean:
	rm -rf dist .tap
