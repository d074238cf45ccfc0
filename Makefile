# ldbroker: `make run` installs, builds and starts the broker on the embedded store (port 1026);
# `make test` installs, builds, starts the servers the tests need and runs every test.
SHELL := /bin/bash
NPM ?= npm
PORT ?= 1026
ARGS ?=

.PHONY: install build build-test run test test-unit test-api bench bench-long bench-scale bench-ceiling bench-memory bench-smoke lint format clean conformance tune

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

# The tests transpiled once into dist/test/ (test/helpers/compile-tests.js): tap runs JavaScript there instead of
# transpiling each file and what it imports again in every test process. `npx tap test/unit/foo.test.ts` still works.
build-test: install
	@# tsc (dist/src, dist/workers, dist/bench, dist/tune) and the tests' transpile (dist/test) write apart and read
	@# only the sources: both at once, on the two cores (the transpile took 4 of the build's 25 s after tsc).
	@node test/helpers/compile-tests.js & tests=$$!; \
	  $(MAKE) --no-print-directory build; built=$$?; \
	  wait $$tests && exit $$built

# Every test: tap (unit, api, integration) and the exporter's pytest suite against real servers.
test: build-test
	bash test/run-all.sh

# docdb's tests need the MongoDB-wire server (FerretDB): started, or found running. The tests as JavaScript need no
# TypeScript loader in each test process (test/helpers/js-tests.mjs).
JS_TESTS = NODE_OPTIONS="$${NODE_OPTIONS:+$$NODE_OPTIONS }--import=$(CURDIR)/test/helpers/js-tests.mjs"
test-unit: build-test
	bash test/services/ferretdb.sh
	$(JS_TESTS) npx tap dist/test/unit

test-api: build-test
	bash test/services/ferretdb.sh
	$(JS_TESTS) npx tap dist/test/api

# The main table (bench/run.js) writes the head of bench/RESULTS.md; the other benchmarks (the MQTT and Modbus
# bridges' start test/services/mosquitto.sh and pymodbus.sh) replace their sections of it. bench/all.sh keeps the
# whole run within 20 minutes (issue 24) and prints its estimate and progress; bench-long runs the two benchmarks it
# cuts at full size, bench-scale the main rows beside 1M unrelated entities, 10k subscriptions and 100 tenants,
# bench-ceiling 4 and 8 pipeline threads on the 2 cores beside the default 2 (issue 24 items 3 and 4).
bench: build
	bash bench/all.sh

bench-long: build
	bash bench/all.sh --long

bench-scale: build
	node dist/bench/run.js --scale --variants uws-pool

bench-ceiling: build
	node dist/bench/run.js --ceiling --no-pin --variants uws-pool --only retrieve,patch,query-type

# The memory of a broker holding 1,000,000 entities under load for 10 minutes (issue 24 item 6, README "Sizing"):
# about 12 minutes, so apart from make bench.
bench-memory: build
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
