# ascendless: build, install, demo and test entry points. See README.md.

PREFIX ?= /usr/local/ascendless
DESTDIR ?=
# FORCE=1 lets `make install` overwrite files in PREFIX that ascendless did not install.
FORCE ?=
CARGO ?= cargo
# Cargo features of the library that `build` and `install` make, e.g. FEATURES=ucx for the UCX
# transport (needs libucx-dev; see docs/deploy-rdma.md). Empty: the default build.
FEATURES ?=
CARGO_FEATURES := $(if $(strip $(FEATURES)),--features $(FEATURES))
VERSION := $(shell sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -n 1)
# Where cargo puts the release build: CARGO_TARGET_DIR if set, as cargo itself does.
RELEASE_DIR := $(or $(CARGO_TARGET_DIR),target)/release
DEMO_PREFIX := $(CURDIR)/build/demo-prefix
# The virtualenv of the Python tests (kept between runs; `make clean` removes it).
PYENV := build/pyenv
PYTHON ?= python3

.PHONY: all build headers install uninstall demo examples test prereqs test-rust test-install test-python bench clean
.PHONY: test-sanitizers soak test-ucx bench-outside

all: build

build:
	$(CARGO) build --release --lib --bin ascendless-bench $(CARGO_FEATURES)

# Regenerate the checked-in C headers from the Rust code.
headers:
	ASCENDLESS_BLESS=1 $(CARGO) test --test generated_headers

install: build
	FORCE="$(FORCE)" scripts/install.sh "$(DESTDIR)$(PREFIX)" "$(PREFIX)" "$(RELEASE_DIR)" "$(VERSION)"

uninstall:
	scripts/uninstall.sh "$(DESTDIR)$(PREFIX)"

# Build, install into build/demo-prefix, build the C/C++ examples against it and run them.
demo: build
	scripts/install.sh "$(DEMO_PREFIX)" "$(DEMO_PREFIX)" "$(RELEASE_DIR)" "$(VERSION)" >/dev/null
	scripts/demo.sh "$(DEMO_PREFIX)"

# Every test. What they need from the system (cmake, valgrind, a C++ compiler...) is checked
# first, in one line, rather than deep inside a step (scripts/prereqs.sh; `.ci/run` installs it).
TESTS := test-rust test-install test-python test-sanitizers test-ucx test-fuzz test-miri
test: prereqs
	@$(MAKE) --no-print-directory $(TESTS)

prereqs:
	@scripts/prereqs.sh

# The ABI tests (tests/c_abi.rs) read target/debug/libascendless.so, which `cargo test` does
# not build (it builds the library only as a dependency, under deps/), so build it first.
test-rust:
	$(CARGO) build --lib
	$(CARGO) test --all-targets

# Install into a temporary prefix and build programs against it every way a user would; then
# the vendor-named libraries: only vendor names in NEEDED, and a run on a stand-in vendor tree.
test-install: build
	tests/install/run.sh "$(RELEASE_DIR)" "$(VERSION)"
	tests/install/vendor_names/run.sh "$(RELEASE_DIR)" "$(VERSION)"

# The C/C++ examples and test programs, against an installed package, compiled with ASan+UBSan
# (LeakSanitizer on) and run under valgrind memcheck: any report fails.
test-sanitizers: build
	tests/sanitizers/run.sh "$(RELEASE_DIR)" "$(VERSION)"

# The UCX transport (cargo feature ucx), when the system has UCX (libucx-dev): its Rust tests,
# then every ADXL example against a UCX-enabled install, over UCX's TCP and shared memory.
# Without UCX it says so and passes, so `make test` works on machines without it.
test-ucx:
	@if ! pkg-config --exists ucx; then echo "test-ucx: SKIPPED (libucx-dev not installed)"; exit 0; fi; \
	set -e; \
	$(CARGO) test --features ucx --lib; \
	$(CARGO) test --features ucx --test adxl_ucx; \
	CARGO="$(CARGO)" tests/ucx/run.sh "$(VERSION)"

# The soak (not part of `make test`): worker processes moving and checking data and ringing IPC
# notifies for DURATION seconds, printing RSS and descriptor counts every INTERVAL seconds.
DURATION ?= 60
INTERVAL ?= 5
soak:
	$(CARGO) build --release --bin ascendless-soak
	$(RELEASE_DIR)/ascendless-soak --duration $(DURATION) --interval $(INTERVAL)

# The Python `acl` package (python/): installed with pip into a virtualenv under build/, as a
# user would, then its pytest suite against the release library.
test-python: build
	$(PYTHON) -m venv $(PYENV)
	$(PYENV)/bin/pip install -q --disable-pip-version-check pytest numpy
	$(PYENV)/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps ./python
	ASCENDLESS_LIBRARY=$(abspath $(RELEASE_DIR))/libascendless.so $(PYENV)/bin/python -m pytest -p no:cacheprovider python/tests

# HCCL against an installed tree (not in `make test` on its own: test-install and test-python run
# these too): the C programs built with CMake (tests/install/hccl_style, hccl_ranks), and the
# ctypes bindings as vLLM-Ascend writes them, loading the tree's lib64/libhccl.so.
HCCL_PREFIX := build/hccl-prefix
.PHONY: test-hccl
test-hccl: build
	rm -rf $(HCCL_PREFIX)
	scripts/install.sh "$(CURDIR)/$(HCCL_PREFIX)" "$(CURDIR)/$(HCCL_PREFIX)" "$(RELEASE_DIR)" "$(VERSION)" >/dev/null
	tests/install/hccl_style/run.sh $(HCCL_PREFIX)
	tests/install/hccl_ranks/run.sh $(HCCL_PREFIX)
	$(PYTHON) -m venv $(PYENV)
	$(PYENV)/bin/pip install -q --disable-pip-version-check pytest numpy
	$(PYENV)/bin/pip install -q --disable-pip-version-check --force-reinstall --no-deps ./python
	HCCL_SO_PATH=$(CURDIR)/$(HCCL_PREFIX)/lib64/libhccl.so ASCENDLESS_LIBRARY=$(CURDIR)/$(HCCL_PREFIX)/lib64/libascendless.so \
		$(PYENV)/bin/python -m pytest -p no:cacheprovider python/tests/test_hccl_ctypes.py

# The cargo-fuzz targets of fuzz/ under libFuzzer, FUZZ_SECONDS each (10 in `make test`; `make
# fuzz` runs longer); tests/fuzz_corpus.rs replays their corpus under plain `cargo test` too.
.PHONY: test-fuzz test-miri fuzz

test-fuzz:
	scripts/fuzz.sh $(or $(FUZZ_SECONDS),10)

fuzz:
	scripts/fuzz.sh $(or $(FUZZ_SECONDS),300)

# The pure-Rust unit tests under Miri (scripts/miri.sh selects them).
test-miri:
	scripts/miri.sh

# Benchmarks: each prints its figures as ratios against a baseline measured in the same run.
bench:
	$(CARGO) bench

# Issue 37's outside benchmarks, built against an installed tree (`make install PREFIX=...`
# first) as a user builds, into build/outside, and run once each with their defaults:
# `make bench-outside PREFIX=/opt/ascendless`. Not part of `make test` (the install check
# smoke-runs them).
OUTSIDE_DIR := build/outside
bench-outside:
	@[ -n "$(PREFIX)" ] && [ -f "$(PREFIX)/set_env.sh" ] || { echo "usage: make bench-outside PREFIX=<an installed tree>" >&2; exit 2; }
	benches/c/notify_pingpong/run.sh "$(PREFIX)" $(OUTSIDE_DIR)/notify_pingpong
	benches/cxx/engine_outside/run.sh "$(PREFIX)" $(OUTSIDE_DIR)/engine_outside
	benches/cxx/llm_datadist_pull/run.sh "$(PREFIX)" $(OUTSIDE_DIR)/llm_datadist_pull
	benches/cxx/hccl_bench/run.sh "$(PREFIX)" $(OUTSIDE_DIR)/hccl_bench

clean:
	$(CARGO) clean
	rm -rf build examples-c/build
