# `make help` lists the targets (the `## ` comment on each rule line) and the
# variables (the `## ` lines below). The two commands of README.md are
# `make run` and `make test`.

## PGCLUSTER_PORT  port of the private PostgreSQL cluster (54329); PGCLUSTER_DIR its folder (.pgdata)
## HOST, PORT      where `make run` serves (127.0.0.1, 8080)
## BENCH_ARGS      options of scripts/bench, e.g. "--only 1,2,7 --rounds 1" (scenario numbers, commas)
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
# print_suppressions=0: a program the tests run (employees-client) would
# otherwise end its standard error with LeakSanitizer's list of the leaks it
# suppressed, which the tests read as the program's own output.
sanitizer_options = LSAN_OPTIONS="suppressions=$(CURDIR)/sanitizers/lsan.supp print_suppressions=0" \
	TSAN_OPTIONS="suppressions=$(CURDIR)/sanitizers/tsan.supp halt_on_error=1"

.PHONY: help run test test-faults soak db stop build setup compose-check bench test-sanitizers fuzz \
	openapi-client-check api-screenshot test-scale release-check

setup: ## install the Debian packages that are missing (scripts/setup)
	@scripts/setup

# The release server links the Swift runtime and FoundationEssentials
# statically, as a position-dependent executable that exports no symbols,
# its functions laid out so that those it runs at start come together.
# Each cuts the pages touched at load, and so the idle RSS (BENCHMARKS.md,
# scenario 6, has the figures): the static runtime, which is not relocated
# at load; no PIE, whose data the loader must relocate; no exported symbols
# (nothing loads the executable as a library). No PIE means no address
# randomisation of the executable itself; shared libraries, heap and stacks
# are still randomised. The kernel maps code 64 KB around each page a
# process first runs, so the few hundred KB of functions run at start,
# scattered over 10 MB, brought in most of it: each function gets a section
# of its own, and lld places those scripts/startup-order.txt names first
# (scripts/startup-order writes the list; names it lacks are only placed
# later). The Dockerfile builds with the same flags.
release_flags := --static-swift-stdlib -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xlinker --no-export-dynamic \
	-Xswiftc -Xfrontend -Xswiftc -function-sections -Xswiftc -use-ld=lld \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/startup-order.txt -Xlinker --no-warn-symbol-ordering

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

# Tests that measure memory or timing run on their own afterwards: in the
# parallel run, other suites' buffers would count as this process's growth,
# other suites' load would change how many streams the server process holds
# at once, and a backend kept off the processor for 100 ms would count as a
# stalled pipeline connection.
solo_tests := MemoryStaysFlat|KeepsMemoryFlat|PeakMemoryStaysBounded|CostGrowsLinearly|oneConnectionServesWhileItKeepsUp
# The HTTP-level suites (server, hostile input, employees API, HEAD against
# GET) run a second time with libmicrohttpd's patches off (MHD_PATCHES=off,
# read by Tests/HTTPTestClient/TestPatches.swift), so that the stock path,
# which untested libmicrohttpd versions take, is tested too.
http_suites := $(shell scripts/mhd-versions --suites)

test: setup ## every test against the real database (the HTTP suites with libmicrohttpd's patches on, then off), compose-check, schemathesis, PostgREST's client, the README's examples, every fuzz target for 5 s, the format, the documentation
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	$(MAKE) --no-print-directory compose-check; \
	scripts/test-dependent-package; \
	EMPLOYEES_DATABASE=employees swift test --skip '$(solo_tests)'; \
	EMPLOYEES_DATABASE=employees swift test --no-parallel --filter '$(solo_tests)'; \
	EMPLOYEES_DATABASE=employees MHD_PATCHES=off swift test --skip-build --filter '$(http_suites)' --skip '$(solo_tests)'; \
	scripts/openapi-check; \
	scripts/postgrest-client-check; \
	scripts/postgrest-write-check; \
	scripts/readme-examples --check; \
	scripts/fuzz all 5; \
	$(MAKE) --no-print-directory format-check; \
	$(MAKE) --no-print-directory docs

# A client generated by swift-openapi-generator from the served document,
# against the live server. Apart from `make test`: its first build, which
# builds the generator too, takes minutes.
openapi-client-check: setup ## build a Swift client from /openapi.json and call the live server with it
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	swift build --product employees-server; \
	scripts/openapi-client-check

api-screenshot: setup ## screenshots of the ?api pages in headless Chromium (.api-screenshots/), with checks
	swift build --product employees-server
	scripts/api-screenshot

bench: build db ## the benchmark suite of BENCHMARKS.md (BENCH_ARGS passes options)
	@$(cluster_env); scripts/bench $(BENCH_ARGS)

# Scaling out (README.md, "Scaling out"): a streaming replica killed and
# restarted under load, two instances behind nginx with one stopped under
# load, PgBouncer in transaction mode with and without --pooler-compatible.
# Apart from `make test`: it starts a replica, PgBouncer, nginx and several
# servers (ports: scripts/test-scale).
test-scale: setup ## replicas, instances behind nginx and PgBouncer under load (scripts/test-scale)
	@scripts/test-scale

# The fault tests alone. They start and stop a second private cluster of their
# own (.pgdata-faults, port PGCLUSTER_PORT - 30000) and need no sample data.
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
sanitizer_skip := ReliabilityTests|$(solo_tests)

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

# The scale profile must hold the topology of README.md's "Scaling out".
scale_services := db replica employees-1 employees-2 nginx

release-check: build ## the release build (make run's, with its link flags) answers the README's tour
	@if $(cluster) status >/dev/null 2>&1; then started=0; else started=1; fi; \
	if [ $$started = 1 ]; then trap '$(cluster) stop' EXIT; fi; \
	$(cluster) start; \
	$(cluster_env); \
	scripts/load-sample-db; \
	EMPLOYEES_SERVER=.build/release/employees-server scripts/readme-examples --check

compose-check: ## validate docker-compose.yml, and its scale profile (no Docker engine needed)
	@docker-compose --file docker-compose.yml config --quiet
	@docker-compose --file docker-compose.yml --profile scale config --quiet
	@services="$$(docker-compose --file docker-compose.yml --profile scale config --services)"; \
	for service in $(scale_services); do \
		grep -qx "$$service" <<<"$$services" || { echo "docker-compose.yml: no $$service in the scale profile" >&2; exit 1; }; \
	done
	@echo "docker-compose.yml: valid, and its scale profile ($(scale_services))"

# Formatting and documentation (CONTRIBUTING.md says how to use them).

.PHONY: format format-check docs

# Every Swift file of the repository (the packages in Examples/ too),
# unless FORMAT_PATHS names some files or folders.
FORMAT_PATHS ?= Package.swift Sources Tests Examples

format: ## format in place, as .swift-format says, every Swift file (or FORMAT_PATHS)
	swift format format --in-place --parallel --recursive $(FORMAT_PATHS)

format-check: ## lint every Swift file (or FORMAT_PATHS) against .swift-format; fails on a warning (make test runs it)
	swift format lint --strict --parallel --recursive $(FORMAT_PATHS)

# DocC archives of the library products, by swift-docc-plugin's
# `generate-documentation`: a broken symbol link or an undocumented
# parameter fails the build (--warnings-as-errors). The archives are in
# .build/plugins/Swift-DocC/outputs/<Module>.doccarchive; `swift package
# --disable-sandbox preview-documentation --target SQLRest` serves one.
doc_modules := SQLRest WebService PostgreSQL PostgreSQLWebService ServiceHost HTTPServer Authentication SQLServices WebServiceClient

docs: ## DocC archives of the library products (with the articles of SQLRest), warnings as errors
	swift package --disable-sandbox generate-documentation $(addprefix --target ,$(doc_modules)) --warnings-as-errors

stop: ## stop the private PostgreSQL cluster
	@$(cluster) stop

help: ## this list
	@echo "Targets:"
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  make %-16s %s\n", $$1, $$2 }' $(firstword $(MAKEFILE_LIST))
	@echo "Variables (make VARIABLE=value TARGET):"
	@awk '/^## / { print "  " substr($$0, 4) }' $(firstword $(MAKEFILE_LIST))
