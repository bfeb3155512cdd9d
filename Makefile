# stepprof's front door. `make demo` builds and profiles the example training
# loop; `make test` runs every test, also under ASan+UBSan, and the threaded
# ones under TSan, and the demo under valgrind where valgrind is installed.
# Both install what they need first (scripts/ensure-deps.sh); valgrind is
# optional and never installed by them. The real build is CMake.
BUILD      ?= build
ASAN_BUILD ?= build-asan
FUZZ_BUILD ?= build-fuzz
TSAN_BUILD ?= build-tsan
FUZZ_SECONDS ?= 5
JOBS       ?= $(shell nproc 2>/dev/null || echo 2)
DEMO_OUT   ?= $(BUILD)/demo/profiler_log
DEMO_ARGS  ?= --workers 0
CMAKE_ARGS ?=
# make install: where (PREFIX), and under which staging root (DESTDIR, for
# packaging: files land in $(DESTDIR)$(PREFIX) and still work from $(PREFIX)).
PREFIX     ?= /usr/local
DESTDIR    ?=

.PHONY: all deps build demo test test-default test-asan asan test-tsan tsan bench golden install install-files clean

all: build

deps:
	@sh scripts/ensure-deps.sh
	@sh scripts/ensure-deps.sh mpi || true

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=RelWithDebInfo $(CMAKE_ARGS)

build: deps $(BUILD)/CMakeCache.txt
	cmake --build $(BUILD) -j $(JOBS)

# DEMO_OUT: the directory the trace goes to (each run adds one file, and
# rewrites report.html, the HTML report of that trace);
# DEMO_ARGS: train_mlp's options. Two runs to compare with `stepprof diff`:
#   make demo DEMO_OUT=build/demo/workers0
#   make demo DEMO_OUT=build/demo/workers4 DEMO_ARGS='--workers 4'
demo: build
	@echo "== stepprof demo: a small MLP trained on synthetic data, steps [10, 20) profiled"
	@echo "$(BUILD)/examples/train_mlp $(DEMO_ARGS) --out $(DEMO_OUT)"
	@$(BUILD)/examples/train_mlp $(DEMO_ARGS) --out $(DEMO_OUT) > $(BUILD)/demo.log; rc=$$?; \
		cat $(BUILD)/demo.log; exit $$rc
	@trace=$$(sed -n 's/^trace: //p' $(BUILD)/demo.log | tail -1); \
		$(BUILD)/stepprof report "$$trace" -o $(DEMO_OUT)/report.html > /dev/null && \
		echo "HTML report (diagnosis, step breakdown, tables, timeline): $(DEMO_OUT)/report.html"
	@echo "Open the trace in https://ui.perfetto.dev (Open trace file) or chrome://tracing."
	@echo "Compare data loading on worker threads: make demo DEMO_ARGS='--workers 4'"

# The GPU example (examples/gpu_train): a toy MLP in CUDA kernels, steps
# [10, 15) profiled with the GPU target. Needs nvcc to build (CMake looks for
# it when the build directory is configured) and a CUDA device to run; says
# which one is missing otherwise.
GPU_DEMO_OUT ?= $(BUILD)/gpu_demo/profiler_log
.PHONY: gpu-demo
gpu-demo: build
	@if [ ! -x $(BUILD)/examples/gpu_train ]; then \
		echo "gpu-demo: $(BUILD)/examples/gpu_train was not built: CMake found no CUDA compiler (nvcc)."; \
		echo "  Install the CUDA toolkit or put nvcc on PATH (or set CUDACXX), then: rm -rf $(BUILD) && make gpu-demo"; \
		exit 1; \
	fi
	@echo "== stepprof GPU demo: a toy MLP in CUDA kernels, steps [10, 15) profiled with the GPU target"
	@$(BUILD)/examples/gpu_train --out $(GPU_DEMO_OUT); rc=$$?; \
	if [ $$rc -eq 77 ]; then \
		echo "gpu-demo: no usable CUDA device on this machine (see the line above); nothing was profiled."; \
		exit 1; \
	fi; \
	exit $$rc
	@echo "Open the trace in https://ui.perfetto.dev: kernels, copies and memsets on the GPU 0 track,"
	@echo "each linked by an arrow to its launch on the training thread."

# The checks of GPU tracing that need a real GPU (tools/gpu_check, docs/gpu-verification.md):
# with a GPU, builds, installs the Python package (python/test.sh: torch in
# build/python-venv), runs every check under one time budget and puts a dated section
# on top of docs/gpu-verification.md. Without a GPU it prints one line and changes
# nothing. gpu-carry prepares .devcarry/ for a GPU machine that has no build of its
# own: there, `sh tools/gpu_check/on_device.sh` (docs/gpu-verification.md says how).
GPU_CHECK_PY ?= $(BUILD)/python-venv/bin/python
.PHONY: gpu-check gpu-carry
gpu-check:
	@if python3 tools/gpu_check/gpu_check.py --probe; then \
		$(MAKE) --no-print-directory build && STEPPROF_INSTALL_ONLY=1 sh python/test.sh && \
		python3 tools/gpu_check/gpu_check.py --build $(BUILD) --python $(GPU_CHECK_PY); \
	fi

gpu-carry: build
	python3 tools/gpu_check/carry.py --build $(BUILD) --dest .devcarry

test: test-default test-asan test-tsan test-python test-fuzz test-valgrind test-compat

# Chromium first, for the HTML report's browser test (skipped, saying so, without it).
test-default: build
	@sh scripts/ensure-deps.sh browser || true
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

# The tests that start threads (or fork while threads record), under
# ThreadSanitizer, built with clang. Only these targets are built.
TSAN_TESTS ?= record_test_record record_test_fork record_test_memory api_test_profiler \
	api_test_timer_stack api_test_handlers api_test_misuse api_test_stream api_test_collect_hooks api_test_span_jobs sys_test_alloc load_test_roundtrip \
	export_test_chrome_json export_test_out record_test_cap_100m record_test_ring record_test_correlate \
	record_test_reentry record_test_cap_ends record_test_stream \
	$(if $(wildcard $(CUDA_HOME)/include/cupti.h /usr/local/cuda/include/cupti.h \
		/usr/local/cuda/extras/CUPTI/include/cupti.h),gpu_live_gpu)
$(TSAN_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(TSAN_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=RelWithDebInfo -DSP_TSAN=ON \
		-DSP_BUILD_BENCH=OFF $(CMAKE_ARGS)

# Configured again first: named targets are looked up before CMake re-globs
# tests/, so a test file added since the last configure would be unknown.
tsan: deps $(TSAN_BUILD)/CMakeCache.txt
	cmake -S . -B $(TSAN_BUILD) > /dev/null
	cmake --build $(TSAN_BUILD) -j $(JOBS) --target $(TSAN_TESTS)

# die_after_fork=0: a profiled process keeps the exit hook's signal thread
# (src/inject/exit_signals.c), so tests that fork and start a profiler in the
# child fork a multi-threaded process, which TSan refuses by default.
test-tsan: tsan
	cd $(TSAN_BUILD) && TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1 die_after_fork=0" \
		ctest --output-on-failure -j $(JOBS) -R '^($(shell echo $(TSAN_TESTS) | tr ' ' '|'))$$'

# libFuzzer targets of the loaders (tests/fuzz), built with clang, each run for
# FUZZ_SECONDS from the seeds in tests/fuzz/seeds and tests/data. New inputs go
# to $(FUZZ_BUILD)/corpus-*, crashes to $(FUZZ_BUILD)/crash-*.
.PHONY: fuzz test-fuzz
$(FUZZ_BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(FUZZ_BUILD) -DCMAKE_C_COMPILER=clang -DCMAKE_BUILD_TYPE=Debug -DSP_FUZZ=ON \
		-DSP_BUILD_TESTS=OFF -DSP_BUILD_EXAMPLES=OFF -DSP_BUILD_BENCH=OFF $(CMAKE_ARGS)

fuzz: deps $(FUZZ_BUILD)/CMakeCache.txt
	cmake -S . -B $(FUZZ_BUILD) > /dev/null
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_load_pb fuzz_load_json fuzz_load_dump

test-fuzz: fuzz
	@for t in pb json dump; do \
		mkdir -p $(FUZZ_BUILD)/corpus-$$t && \
		echo "== fuzz_load_$$t for $(FUZZ_SECONDS) s" && \
		$(FUZZ_BUILD)/tests/fuzz/fuzz_load_$$t -max_total_time=$(FUZZ_SECONDS) -timeout=10 \
			-rss_limit_mb=2048 -max_len=65536 -print_final_stats=0 \
			-artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus-$$t tests/fuzz/seeds tests/data \
			2>$(FUZZ_BUILD)/fuzz-$$t.log || { tail -40 $(FUZZ_BUILD)/fuzz-$$t.log; exit 1; }; \
		tail -1 $(FUZZ_BUILD)/fuzz-$$t.log; \
	done

# The long fuzz run of issue 9's acceptance, not part of `make test`: each
# loader fuzzer runs FUZZ_RUNS executions (one after the other), continuing
# the corpus of test-fuzz. Prints the executions and the rate of each; a
# finding stops it, with the reproducer in $(FUZZ_BUILD)/crash-*.
FUZZ_RUNS ?= 1000000
.PHONY: fuzz-long
fuzz-long: fuzz
	@for t in pb json dump; do \
		mkdir -p $(FUZZ_BUILD)/corpus-$$t && \
		echo "== fuzz_load_$$t for $(FUZZ_RUNS) runs" && \
		$(FUZZ_BUILD)/tests/fuzz/fuzz_load_$$t -runs=$(FUZZ_RUNS) -timeout=10 \
			-rss_limit_mb=2048 -max_len=65536 -print_final_stats=1 \
			-artifact_prefix=$(FUZZ_BUILD)/crash-$$t- $(FUZZ_BUILD)/corpus-$$t tests/fuzz/seeds tests/data \
			2>$(FUZZ_BUILD)/fuzz-long-$$t.log || { tail -40 $(FUZZ_BUILD)/fuzz-long-$$t.log; exit 1; }; \
		grep -E '^(Done|stat::number_of_executed_units|stat::average_exec_per_sec)' $(FUZZ_BUILD)/fuzz-long-$$t.log; \
	done

# The demo under valgrind (memcheck): any error, or a definitely lost block,
# fails. Two loader threads, steps [10, 20) profiled. `make test` runs it
# only where valgrind is installed (it does not install it). No suppressions
# are needed today; third-party noise would go in tests/valgrind.supp.
VALGRIND_ARGS ?= --workers 2 --steps 22 --batch 16
VALGRIND_OUT  ?= $(BUILD)/valgrind
.PHONY: valgrind test-valgrind
valgrind: build
	@echo "== valgrind: train_mlp $(VALGRIND_ARGS)"
	@rm -rf $(VALGRIND_OUT) && mkdir -p $(VALGRIND_OUT)
	@valgrind --error-exitcode=1 --leak-check=full --errors-for-leak-kinds=definite \
		$(if $(wildcard tests/valgrind.supp),--suppressions=tests/valgrind.supp) \
		$(BUILD)/examples/train_mlp $(VALGRIND_ARGS) --out $(VALGRIND_OUT)/profiler_log \
		>$(VALGRIND_OUT)/valgrind.log 2>&1 || { tail -60 $(VALGRIND_OUT)/valgrind.log; exit 1; }
	@grep -E 'definitely lost|ERROR SUMMARY' $(VALGRIND_OUT)/valgrind.log

test-valgrind:
	@if command -v valgrind >/dev/null 2>&1; then $(MAKE) --no-print-directory valgrind; \
	else echo "test-valgrind: valgrind is not installed; skipped (apt-get install valgrind)"; fi

# The viewer compatibility suite (tests/compat, docs/viewers.md): the
# TensorBoard plugin, HTA and catapult (the plugin's trace viewer, in headless
# Chromium) open stepprof's traces with their own code. `make compat` installs
# them: Chromium from Debian when root (else catapult is skipped with a
# message), the Python packages from PyPI into a throwaway venv. `make test`
# runs the suite only when that venv already works, and never installs.
COMPAT_VENV ?= $(BUILD)/compat-venv
COMPAT_OUT  ?= $(BUILD)/compat
COMPAT_PKGS ?= torch-tb-profiler==0.4.3 tensorboard==2.21.0 HolisticTraceAnalysis==0.5.0 \
	pandas==2.2.3 numpy==2.4.6 plotly==7.1.0
COMPAT_PY   := $(COMPAT_VENV)/bin/python
.PHONY: compat compat-venv compat-run test-compat

compat-venv:
	@if [ "$$(cat $(COMPAT_VENV)/.stepprof-pkgs 2>/dev/null)" != "$(COMPAT_PKGS)" ]; then \
		echo "== compat: installing the viewers into $(COMPAT_VENV): $(COMPAT_PKGS)"; \
		rm -rf $(COMPAT_VENV) && python3 -m venv $(COMPAT_VENV) && \
		$(COMPAT_PY) -m pip install -q --disable-pip-version-check $(COMPAT_PKGS) && \
		echo "$(COMPAT_PKGS)" > $(COMPAT_VENV)/.stepprof-pkgs || { \
			echo "compat: pip install failed (PyPI unreachable?); see the lines above" >&2; exit 1; }; \
	fi

compat: build compat-venv
	@sh scripts/ensure-deps.sh compat || true
	@$(MAKE) --no-print-directory compat-run

compat-run:
	@start=$$(date +%s); \
	$(COMPAT_PY) tests/compat/run_compat.py --build $(BUILD) --out $(COMPAT_OUT); rc=$$?; \
	echo "make compat: $$(( $$(date +%s) - start )) s, traces and screenshots in $(COMPAT_OUT)"; \
	exit $$rc

# make test installs the viewers as make compat does; where pip cannot, the
# suite is skipped saying so (and catapult alone where Chromium cannot be had).
test-compat: test-default
	@if $(MAKE) --no-print-directory compat-venv && $(COMPAT_PY) -c 'import torch_tb_profiler, hta' >/dev/null 2>&1; then \
		sh scripts/ensure-deps.sh compat || true; \
		$(MAKE) --no-print-directory compat-run; \
	else \
		echo "compat: skipped: the viewers could not be installed in $(COMPAT_VENV) (see above)"; \
	fi

# Runs every benchmark and rewrites the generated table in docs/performance.md.
bench: build
	STEPPROF_INSTALL_ONLY=1 sh python/test.sh
	python3 bench/report.py --build $(BUILD) --doc docs/performance.md

# Rewrites tests/golden/ from the current output; review `git diff tests/golden` before committing.
golden: build
	cd $(BUILD) && SP_UPDATE_GOLDEN=1 ctest -R 'summary|pb_wire|json_paddle' --output-on-failure
	git diff --stat -- tests/golden

# The prefix is given at install time, so it holds whatever build/ was
# configured with; install-files installs what $(BUILD) holds without
# building it (tests/install runs it).
install: build
	@$(MAKE) --no-print-directory install-files

install-files:
	DESTDIR="$(DESTDIR)" cmake --install $(BUILD) --prefix "$(PREFIX)"

clean:
	rm -rf $(BUILD) $(ASAN_BUILD) $(FUZZ_BUILD) $(TSAN_BUILD)
