# stepprof's front door. `make demo` builds and profiles the example training
# loop; `make test` runs every test, also under ASan+UBSan. Both install what
# they need first (scripts/ensure-deps.sh). The real build is CMake.
BUILD      ?= build
ASAN_BUILD ?= build-asan
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_OUT   ?= $(BUILD)/demo/profiler_log
DEMO_ARGS  ?= --workers 0
CMAKE_ARGS ?=

.PHONY: all deps build demo test test-default test-asan asan bench golden install clean

all: build

deps:
	@sh scripts/ensure-deps.sh

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

demo: build
	@echo "== stepprof demo: a small MLP trained on synthetic data, steps [10, 20) profiled"
	$(BUILD)/examples/train_mlp $(DEMO_ARGS) --out $(DEMO_OUT)
	@echo "Open the trace in https://ui.perfetto.dev (Open trace file) or chrome://tracing."
	@echo "Compare data loading on worker threads: make demo DEMO_ARGS='--workers 4'"

test: test-default test-asan test-python

test-default: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

$(ASAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(ASAN_BUILD) -DCMAKE_BUILD_TYPE=Debug -DSP_SANITIZE=ON -DSP_BUILD_BENCH=OFF $(CMAKE_ARGS)

asan: deps $(ASAN_BUILD)/CMakeCache.txt
	cmake --build $(ASAN_BUILD) -j $(JOBS)

# The Python package (python/, tests/python/): venv in build/python-venv, pip install ., pytest.
.PHONY: test-python
test-python: deps
	sh python/test.sh

test-asan: asan
	cd $(ASAN_BUILD) && ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1 \
		ctest --output-on-failure -j $(JOBS)

# Runs every benchmark and rewrites the generated table in docs/performance.md.
bench: build
	STEPPROF_INSTALL_ONLY=1 sh python/test.sh
	python3 bench/report.py --build $(BUILD) --doc docs/performance.md

# Rewrites tests/golden/ from the current output; review `git diff tests/golden` before committing.
golden: build
	cd $(BUILD) && SP_UPDATE_GOLDEN=1 ctest -R summary --output-on-failure
	git diff --stat -- tests/golden

install: build
	cmake --install $(BUILD)

clean:
	rm -rf $(BUILD) $(ASAN_BUILD)
