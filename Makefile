# The two commands (README.md):
#   make run    install what is missing, build in release mode, start the private
#               PostgreSQL cluster, load the sample database, serve on localhost:8080
#   make test   the same setup, then every test against that real database;
#               stops the cluster afterwards if this run started it
# Also: make db (cluster and sample data only), make stop, make build,
#       make compose-check (validates docker-compose.yml),
#       make bench (the benchmark suite, BENCHMARKS.md; BENCH_ARGS passes options),
#       make soak (10 minutes of mixed requests at full load; SOAK_DURATION=seconds),
#       make test-faults (only the fault tests, Tests/ReliabilityTests).
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

.PHONY: run test test-faults soak db stop build setup compose-check bench

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

# Tests that measure this process's memory run on their own afterwards: in the
# parallel run, other suites' buffers would count as their growth.
memory_tests := MemoryStaysFlat|KeepsMemoryFlat

test: setup
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	$(MAKE) --no-print-directory compose-check; \
	EMPLOYEES_DATABASE=employees swift test --skip '$(memory_tests)'; \
	EMPLOYEES_DATABASE=employees swift test --no-parallel --filter '$(memory_tests)'

bench: build db
	@$(cluster_env); scripts/bench $(BENCH_ARGS)

# The fault tests alone. They start and stop a second private cluster of their
# own (.pgdata-faults, port PGCLUSTER_PORT + 100) and need no sample data.
test-faults: setup
	swift test --filter ReliabilityTests

# Soak: the release server under wrk for SOAK_DURATION seconds (600); see scripts/soak.
soak: build db
	@scripts/soak

compose-check:
	@docker-compose --file docker-compose.yml config --quiet
	@echo "docker-compose.yml: valid"

stop:
	@$(cluster) stop
