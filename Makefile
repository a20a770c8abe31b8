# The README's two commands are `make demo` and `make test`.
BUILD      ?= build
JOBS       ?= $(shell nproc)
CMAKE_ARGS ?=

.PHONY: deps build demo test test-asan test-tsan clean

deps:
	@./scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	./$(BUILD)/warden demo

# Release tests, then the same suite under AddressSanitizer+UBSan.
test: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DWARDEN_WERROR=ON $(CMAKE_ARGS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS) --timeout 300
	$(MAKE) test-asan

test-asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DWARDEN_WERROR=ON -DWARDEN_SANITIZE=address $(CMAKE_ARGS) >/dev/null
	@cmake --build build-asan -j $(JOBS)
	cd build-asan && ctest --output-on-failure -j $(JOBS) --timeout 300

test-tsan: deps
	@cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DWARDEN_WERROR=ON -DWARDEN_SANITIZE=thread $(CMAKE_ARGS) >/dev/null
	@cmake --build build-tsan -j $(JOBS)
	cd build-tsan && ctest --output-on-failure -j $(JOBS) --timeout 300

clean:
	rm -rf $(BUILD) build-asan build-tsan
