# The two commands (README.md):
#   make run    install what is missing, build in release mode, start the private
#               PostgreSQL cluster, load the sample database, serve on localhost:8080
#   make test   the same setup, then every test against that real database;
#               stops the cluster afterwards if this run started it
# Also: make db (cluster and sample data only), make stop, make build,
#       make compose-check (validates docker-compose.yml),
#       make test-sanitizers (every test under AddressSanitizer, then ThreadSanitizer),
#       make fuzz (every fuzz target for FUZZ_SECONDS, default 300, each).
#
# Variables: PGCLUSTER_PORT (54329), HOST (127.0.0.1), PORT (8080).

SHELL := /bin/bash
.SHELLFLAGS := -euo pipefail -c
export PATH := /opt/swift/usr/bin:$(PATH)

PGCLUSTER_PORT ?= 54329
export PGCLUSTER_PORT
HOST ?= 127.0.0.1
PORT ?= 8080

cluster := scripts/pg-cluster
cluster_env = eval "$$($(cluster) env)"

FUZZ_SECONDS ?= 300
sanitizer_options = LSAN_OPTIONS=suppressions=$(CURDIR)/sanitizers/lsan.supp \
	TSAN_OPTIONS="suppressions=$(CURDIR)/sanitizers/tsan.supp halt_on_error=1"

.PHONY: run test db stop build setup compose-check test-sanitizers fuzz

setup:
	@scripts/setup

build: setup
	swift build -c release --product employees-server

db: setup
	@$(cluster) start
	@$(cluster_env); scripts/load-sample-db

run: build db
	@$(cluster_env); \
	export PGDATABASE=employees PGUSER=employees_reader; \
	echo "employees-server: serving http://localhost:$(PORT) (Ctrl-C stops it; make stop stops the database)"; \
	exec .build/release/employees-server --host $(HOST) --port $(PORT)

test: setup
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	$(MAKE) --no-print-directory compose-check; \
	EMPLOYEES_DATABASE=employees swift test; \
	scripts/fuzz all 5

# The same tests under AddressSanitizer (and LeakSanitizer), then
# ThreadSanitizer, each in its own build folder; the cluster is started
# (and stopped afterwards) only if it is not running.
test-sanitizers: setup
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	export EMPLOYEES_DATABASE=employees $(sanitizer_options); \
	time swift test --sanitize=address --scratch-path .build-asan; \
	time swift test --sanitize=thread --scratch-path .build-tsan

fuzz:
	scripts/fuzz all $(FUZZ_SECONDS)

compose-check:
	@docker-compose --file docker-compose.yml config --quiet
	@echo "docker-compose.yml: valid"

stop:
	@$(cluster) stop
