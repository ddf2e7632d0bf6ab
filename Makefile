# `make help` lists the targets (the `## ` comment on each rule line) and the
# variables (the `## ` lines below). The two commands of README.md are
# `make run` and `make test`.

## PGCLUSTER_PORT  port of the private PostgreSQL cluster (54329); PGCLUSTER_DIR its folder (.pgdata)
## HOST, PORT      where `make run` serves (127.0.0.1, 8080)
## BENCH_ARGS      options of scripts/bench, e.g. "--only 12 --rounds 1"
## FUZZ_SECONDS    seconds per fuzz target in `make fuzz` (300)
## SOAK_DURATION   seconds of load in `make soak` (600)

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

.PHONY: help run test test-faults soak db stop build setup compose-check bench test-sanitizers fuzz

setup: ## install the Debian packages that are missing (scripts/setup)
	@scripts/setup

# The release server links the Swift runtime and FoundationEssentials
# statically, as a position-dependent executable that exports no symbols.
# Each cuts pages touched at load (idle RSS, BENCHMARKS.md scenario 6): the
# static runtime 20.2 -> 16.8 MB (when measured); no PIE, whose data the
# loader must relocate, 15.5 -> 14.0 MB; no exported symbols (nothing loads
# the executable as a library), 14.5 -> 14.0 MB. No PIE means no address
# randomisation of the executable itself; shared libraries, heap and stacks
# are still randomised. The Dockerfile builds with the same flags.
release_flags := --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xlinker --no-export-dynamic

build: setup ## build employees-server and sql-rest in release mode
	swift build -c release $(release_flags) --product employees-server
	swift build -c release $(release_flags) --product sql-rest

db: setup ## start the private PostgreSQL cluster and load the sample database
	@$(cluster) start
	@$(cluster_env); scripts/load-sample-db

run: build db ## build, start the database, serve http://localhost:8080 (HOST, PORT) until Ctrl-C
	@$(cluster_env); \
	export PGDATABASE=employees PGUSER=employees_reader; \
	echo "employees-server: serving http://localhost:$(PORT) (Ctrl-C stops it; make stop stops the database)"; \
	exec .build/release/employees-server --host $(HOST) --port $(PORT)

# Tests that measure this process's memory run on their own afterwards: in the
# parallel run, other suites' buffers would count as their growth.
memory_tests := MemoryStaysFlat|KeepsMemoryFlat

test: setup ## every test against the real database, compose-check, every fuzz target for 5 s
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	$(MAKE) --no-print-directory compose-check; \
	scripts/test-dependent-package; \
	EMPLOYEES_DATABASE=employees swift test --skip '$(memory_tests)'; \
	EMPLOYEES_DATABASE=employees swift test --no-parallel --filter '$(memory_tests)'; \
	scripts/fuzz all 5

bench: build db ## the benchmark suite of BENCHMARKS.md (BENCH_ARGS passes options)
	@$(cluster_env); scripts/bench $(BENCH_ARGS)

# The fault tests alone. They start and stop a second private cluster of their
# own (.pgdata-faults, port PGCLUSTER_PORT + 100) and need no sample data.
test-faults: setup ## only the fault tests (Tests/ReliabilityTests), on a cluster of their own
	swift test --filter ReliabilityTests

# Soak: the release server under wrk for SOAK_DURATION seconds (600); see scripts/soak.
soak: build db ## the release server under full mixed load for SOAK_DURATION seconds
	@scripts/soak

# The same tests under AddressSanitizer (and LeakSanitizer), then
# ThreadSanitizer, each in its own build folder; the cluster is started
# (and stopped afterwards) only if it is not running. Two groups are left to
# the plain run: the fault tests, whose server is a separate, unsanitized
# employees-server process, and the memory tests, since sanitizers' shadow
# memory makes a process's RSS meaningless.
sanitizer_skip := ReliabilityTests|$(memory_tests)

test-sanitizers: setup ## the tests under AddressSanitizer, then ThreadSanitizer
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	export EMPLOYEES_DATABASE=employees $(sanitizer_options); \
	time swift test --sanitize=address --scratch-path .build-asan --skip '$(sanitizer_skip)'; \
	time swift test --sanitize=thread --scratch-path .build-tsan --skip '$(sanitizer_skip)'

fuzz: ## every fuzz target for FUZZ_SECONDS seconds each
	scripts/fuzz all $(FUZZ_SECONDS)

compose-check: ## validate docker-compose.yml (no Docker engine needed)
	@docker-compose --file docker-compose.yml config --quiet
	@echo "docker-compose.yml: valid"

stop: ## stop the private PostgreSQL cluster
	@$(cluster) stop

help: ## this list
	@echo "Targets:"
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  make %-16s %s\n", $$1, $$2 }' $(firstword $(MAKEFILE_LIST))
	@echo "Variables (make VARIABLE=value TARGET):"
	@awk '/^## / { print "  " substr($$0, 4) }' $(firstword $(MAKEFILE_LIST))
