# The two commands (README.md):
#   make run    install what is missing, build in release mode, start the private
#               PostgreSQL cluster, load the sample database, serve on localhost:8080
#   make test   the same setup, then every test against that real database;
#               stops the cluster afterwards if this run started it
# Also: make db (cluster and sample data only), make stop, make build,
#       make compose-check (validates docker-compose.yml),
#       make bench (the benchmark suite, BENCHMARKS.md; BENCH_ARGS passes options),
#       make soak (10 minutes of mixed requests at full load; SOAK_DURATION=seconds),
#       make test-faults (only the fault tests, Tests/ReliabilityTests),
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

.PHONY: run test test-faults soak db stop build setup compose-check bench test-sanitizers fuzz

setup:
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

build: setup
	swift build -c release $(release_flags) --product employees-server

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
	scripts/test-dependent-package; \
	EMPLOYEES_DATABASE=employees swift test --skip '$(memory_tests)'; \
	EMPLOYEES_DATABASE=employees swift test --no-parallel --filter '$(memory_tests)'; \
	scripts/fuzz all 5

bench: build db
	@$(cluster_env); scripts/bench $(BENCH_ARGS)

# The fault tests alone. They start and stop a second private cluster of their
# own (.pgdata-faults, port PGCLUSTER_PORT + 100) and need no sample data.
test-faults: setup
	swift test --filter ReliabilityTests

# Soak: the release server under wrk for SOAK_DURATION seconds (600); see scripts/soak.
soak: build db
	@scripts/soak

# The same tests under AddressSanitizer (and LeakSanitizer), then
# ThreadSanitizer, each in its own build folder; the cluster is started
# (and stopped afterwards) only if it is not running. Two groups are left to
# the plain run: the fault tests, whose server is a separate, unsanitized
# employees-server process, and the memory tests, since sanitizers' shadow
# memory makes a process's RSS meaningless.
sanitizer_skip := ReliabilityTests|$(memory_tests)

test-sanitizers: setup
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	export EMPLOYEES_DATABASE=employees $(sanitizer_options); \
	time swift test --sanitize=address --scratch-path .build-asan --skip '$(sanitizer_skip)'; \
	time swift test --sanitize=thread --scratch-path .build-tsan --skip '$(sanitizer_skip)'

fuzz:
	scripts/fuzz all $(FUZZ_SECONDS)

compose-check:
	@docker-compose --file docker-compose.yml config --quiet
	@echo "docker-compose.yml: valid"

stop:
	@$(cluster) stop
