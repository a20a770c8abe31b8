# The README's two commands are `make demo` and `make test`.
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=
# Runs a command against a throwaway PostgreSQL (see the script's header);
# a no-op wrapper when WARDEN_TEST_PG_URL is already set.
PG_CLUSTER := $(CURDIR)/scripts/pg-cluster.sh

# Seconds per fuzz target: `make fuzz` (FUZZ_SECONDS=600 make fuzz for
# longer), and the smoke run inside `make test`.
FUZZ_SECONDS      ?= 20
TEST_FUZZ_SECONDS ?= 5

.PHONY: deps deps-build build demo install package check test test-all test-asan test-tsan thread-safety fuzz chaos bench clean

deps:
	@./scripts/deps.sh

# Only what building warden needs: no test or benchmark tool.
deps-build:
	@./scripts/deps.sh build

# The Release tree with warden alone (the binary, the library, what `make
# install` installs): the first command a newcomer runs builds no test.
# `make test` builds the tests and benchmarks in the same tree
# (scripts/test-all.sh turns them on).
RELEASE_ARGS := -DCMAKE_BUILD_TYPE=Release -DWARDEN_FUNCTIONAL_TESTS=OFF
BINARY_ARGS  := -DWARDEN_BUILD_TESTS=OFF -DWARDEN_BUILD_BENCH=OFF

build: deps-build
	@cmake -S . -B $(BUILD) $(RELEASE_ARGS) $(BINARY_ARGS) $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/warden demo

# The Release tree, installed (docs/install.md): PREFIX=/opt/warden make install.
PREFIX ?= /usr/local
install: build
	cmake --install $(BUILD) --prefix $(PREFIX)

# The .deb packages of the Release tree, written into it (docs/install.md).
package: build
	cd $(BUILD) && cpack -G DEB

# The inner loop (scripts/check.sh): the core, store (SQLite and memory),
# simulation, layer and link checks in a plain -O1 tree; no root,
# no network, no PostgreSQL. It installs nothing: `make deps` once first.
check:
	JOBS=$(JOBS) ./scripts/check.sh

# The Release tree's tests, then the functional suites under
# AddressSanitizer+UBSan and the integration tests under ThreadSanitizer,
# all against one throwaway PostgreSQL server that scripts/pg-cluster.sh
# starts (deps first: it installs the server).
test: deps
	$(PG_CLUSTER) run $(MAKE) test-all

# The body of `make test`; run it through `make test`. Each ctest below is
# wrapped too, so that run alone it still gets a server of its own; inside
# `make test` the wrapper sees WARDEN_TEST_PG_URL and adds nothing.
# scripts/test-all.sh runs the stages (its header lists them): each
# sanitizer tree is compiled in the background, at the lowest priority,
# while the stage before it runs its tests.
test-all: deps
	JOBS=$(JOBS) BUILD=$(BUILD) CMAKE_ARGS='$(CMAKE_ARGS)' FUZZ_SECONDS=$(TEST_FUZZ_SECONDS) \
	  ./scripts/test-all.sh

# AddressSanitizer + UBSan; reports from every process (workers included)
# land in build-asan/reports and fail the run.
test-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWARDEN_WERROR=ON -DWARDEN_SANITIZE=address $(CMAKE_ARGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)
	rm -rf build-asan/reports && mkdir -p build-asan/reports
	cd build-asan && ASAN_OPTIONS="log_path=$(CURDIR)/build-asan/reports/asan" \
	  UBSAN_OPTIONS="log_path=$(CURDIR)/build-asan/reports/ubsan print_stacktrace=1" \
	  $(PG_CLUSTER) run ctest --output-on-failure -j $(JOBS) --timeout 300
	@if ls build-asan/reports/* >/dev/null 2>&1; then \
	  echo "sanitizer reports:"; cat build-asan/reports/*; exit 1; fi

# ThreadSanitizer where threads meet: the worker runtime. Every process the
# tests start (workers included) writes its reports under build-tsan/reports;
# any report fails the run, even from a worker whose test passed.
test-tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DWARDEN_WERROR=ON -DWARDEN_SANITIZE=thread $(CMAKE_ARGS) >/dev/null
	@cmake --build build-tsan -j $(JOBS)
	rm -rf build-tsan/reports && mkdir -p build-tsan/reports
	cd build-tsan && TSAN_OPTIONS="log_path=$(CURDIR)/build-tsan/reports/tsan second_deadlock_stack=1" \
	  $(PG_CLUSTER) run ctest --output-on-failure -j $(JOBS) --timeout 300
	@if ls build-tsan/reports/tsan.* >/dev/null 2>&1; then \
	  echo "ThreadSanitizer reports:"; cat build-tsan/reports/tsan.*; exit 1; fi

# Clang's lock-discipline analysis (-Wthread-safety) over the library and
# the CLI, syntax only: a GUARDED_BY member touched without its mutex, or a
# REQUIRES function called without it, fails (scripts/thread-safety.sh).
thread-safety: deps
	JOBS=$(JOBS) ./scripts/thread-safety.sh

# The libFuzzer targets (fuzz/README.md): builds build-fuzz with clang (only
# the parsing sources), runs the ParseAddArgs tests, then fuzzes every target
# for FUZZ_SECONDS from its seed corpus; exit 1 on any finding.
fuzz: deps
	FUZZ_SECONDS=$(FUZZ_SECONDS) ./fuzz/run.sh

# A long chaos run (tests/chaos/README.md): 10 minutes and 20,000 jobs on
# each backend (CHAOS_DURATION, CHAOS_JOBS, CHAOS_SEED to change); the
# ctests chaos_sqlite and chaos_postgres are its short form.
chaos: deps
	@cmake -S . -B $(BUILD) $(RELEASE_ARGS) -DWARDEN_BUILD_TESTS=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target warden warden_chaos warden_chaos_worker warden_chaos_job
	tests/chaos/run.sh $(BUILD)

# warden against graphile-worker, pg-boss and BullMQ (bench/README.md);
# `bench/run.sh --quick` is the smoke run.
bench: deps
	bench/run.sh --build $(BUILD)

clean:
	rm -rf $(BUILD) build-asan build-tsan build-fuzz build-check
