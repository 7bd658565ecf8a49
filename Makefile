# The whole set-up on a fresh Debian machine with the Rust and Python toolchains installed.
#   make demo  -- release build, `rntuple info` and a short `rntuple dump` of the shared CMS file (or, in a clone
#                 without ../shared/testdata, of a small muon file it writes itself), then a
#                 synthetic dataset written with all cores into one file and read back, with a summary
#   make test  -- installs the test environment (.venv), runs `make lint`, builds, runs cargo tests, the fuzz
#                 smoke run, the cross-implementation pytest suite (ROOT 6.40, uproot) and the Python package's tests
#                 (the wheel, `make wheel`, installed into fresh CPython 3.9 and 3.13 environments among them), then
#                 `make docs`
#   make lint  -- rustfmt (--check) and clippy (-D warnings) on the workspace and on python/, ruff on the Python
#                 code (python, tests, bench), the layout checker and its tests, the public API list (rustdoc
#                 JSON), the C header against crates/rntuple-c (`make header` regenerates it); changes nothing (`cargo fmt --all`, `cd python && cargo fmt` and
#                 `python3 .ci/public_api.py` apply)

SHELL := /bin/bash
VENV ?= .venv
PY := $(VENV)/bin/python
# The shared test files: RNTUPLE_TESTDATA when given, else ../shared/testdata when it is there. A set
# RNTUPLE_TESTDATA (or CI=true) makes missing files a failure; without it the tests on them skip loudly.
ifeq ($(origin RNTUPLE_TESTDATA),undefined)
ifneq ($(wildcard ../shared/testdata/rntuple),)
RNTUPLE_TESTDATA := $(abspath ../shared/testdata)
endif
endif
ifdef RNTUPLE_TESTDATA
export RNTUPLE_TESTDATA
endif
BIN := target/release/rntuple
SHARED_CMS := $(RNTUPLE_TESTDATA)/rntuple/Run2012BC_DoubleMuParked_Muons_1000evts_rntuple_v1-0-0-0.root
# Without the shared files, the demo writes a small muon RNTuple of its own (bench/demo_muons.py).
DEMO_MUONS ?= /tmp/rntuple-demo-muons.root
CMS = $(if $(and $(RNTUPLE_TESTDATA),$(wildcard $(SHARED_CMS))),$(SHARED_CMS),$(DEMO_MUONS))

.PHONY: wheel cbindgen header install dist bench-deps demo test test-long lint build venv cargo-test pytest fuzz-smoke fuzz-long bench-read bench-io bench-formats bench-parallel-write tsan clean python mpi-deps bench-mpi bench-agc bench-cpp-write bench-join bench-merge bench-distributed bench-wide bench-event-loop bench-scheduler docs

# MPI (distributed writing, crates/rntuple-mpi) is built whenever an MPI installation (`mpicc`) is
# present: decided when a recipe runs, so that `make test` can install it first (mpi-deps).
WORKSPACE = --workspace $$(command -v mpicc >/dev/null && echo --features rntuple-cli/mpi,rntuple-c/mpi || echo --exclude rntuple-mpi)
PY_FEATURES = $$(command -v mpicc >/dev/null && echo --features mpi)
SUDO := $(if $(filter 0,$(shell id -u)),,sudo)
MPIRUN := mpirun --oversubscribe $(if $(filter 0,$(shell id -u)),--allow-run-as-root)

build:
	cargo build --release $(WORKSPACE)

# include/rntuple.h, the C ABI's header, generated from crates/rntuple-c by cbindgen (the pinned version, installed
# with `cargo install` when missing, as cargo-fuzz is); `make lint` checks that the committed header matches the code.
CBINDGEN_VERSION := 0.29.4
CBINDGEN := $${CARGO_HOME:-$$HOME/.cargo}/bin/cbindgen
cbindgen:
	@$(CBINDGEN) --version 2>/dev/null | grep -qx "cbindgen $(CBINDGEN_VERSION)" \
		|| cargo install --quiet --locked cbindgen --version $(CBINDGEN_VERSION)
HEADER_CMD = $(CBINDGEN) --quiet --config crates/rntuple-c/cbindgen.toml --crate rntuple-c crates/rntuple-c
header: cbindgen
	$(HEADER_CMD) --output include/rntuple.h

# The C/C++ library as a C++ project expects it: `make install PREFIX=...` puts librntuple_c.so and .a, rntuple.h and
# rntuple.hpp, a pkg-config file (rntuple.pc) and a CMake package (find_package(rntuple): rntuple::rntuple,
# rntuple::rntuple_static) under PREFIX (DESTDIR is honoured). The libraries lose their debug information.
PREFIX ?= /usr/local
C_VERSION = $$(sed -n 's/^version = "\(.*\)"/\1/p' Cargo.toml | head -1)
# With MPI built in (the distributed writer), a static link needs the MPI library too.
C_MPI_LINK = $$(command -v mpicc >/dev/null && mpicc --showme:link 2>/dev/null)
# (XrdCl, for root://, is not linked: the library loads it at the first root:// request, crates/rntuple-xrootd.)
C_STATIC_LIBS = $(C_MPI_LINK) -lgcc_s -lutil -lrt -lpthread -lm -ldl -lc
# (The libraries come from `make build`: building rntuple-c alone would compile the core again with other features.)
# The pkg-config and CMake files find the prefix from their own place: an installed tree may be moved
# (crates/rntuple-c/install/install.sh, which `make dist` uses too).
install: build
	bash crates/rntuple-c/install/install.sh "$(DESTDIR)$(PREFIX)" "$(C_VERSION)" "$(C_STATIC_LIBS)" "$(C_MPI_LINK)"

# The relocatable binary package: target/dist/rntuple-VERSION-linux-x86_64.tar.gz, one top directory with bin/rntuple
# and what `make install` puts in a prefix, plus a README.md on using it from CMake and pkg-config
# (crates/rntuple-c/install/dist.sh).
dist: build
	bash crates/rntuple-c/install/dist.sh "$(C_VERSION)" "$(C_STATIC_LIBS)" "$(C_MPI_LINK)"

# Open MPI and libclang (the Rust MPI bindings generate theirs with it), nginx and xrootd (the HTTP
# and XRootD servers of the remote-reading tests), XrdCl's headers (root:// reads: crates/rntuple-xrootd compiles its
# client in when they are there), cmake and pkg-config (the C ABI's tests), Java 17 (Spark's, for rntuple.spark's tests),
# Chromium (the headless browser that opens `rntuple report`'s pages: tests/cross/test_report_browser.py), from Debian's
# packages when missing.
SYSTEM_PACKAGES := libopenmpi-dev openmpi-bin libclang-dev nginx-light xrootd-server libxrootd-client-dev cmake pkg-config openjdk-17-jre-headless chromium
mpi-deps:
	@if ! command -v mpicc >/dev/null || ! command -v mpirun >/dev/null || ! ls /usr/lib/llvm-*/lib/libclang.so >/dev/null 2>&1 \
		|| ! (command -v nginx >/dev/null || test -x /usr/sbin/nginx) || ! command -v xrootd >/dev/null \
		|| ! test -f /usr/include/xrootd/XrdCl/XrdClFile.hh \
		|| ! command -v cmake >/dev/null || ! command -v pkg-config >/dev/null || ! command -v java >/dev/null \
		|| ! command -v chromium >/dev/null; then \
		echo "== installing Open MPI, libclang, nginx, xrootd (server and client library), cmake, pkg-config, Java 17 and Chromium (apt-get) =="; \
		$(SUDO) apt-get install -y -q $(SYSTEM_PACKAGES) >/dev/null \
		|| ($(SUDO) apt-get update -q >/dev/null && $(SUDO) apt-get install -y -q $(SYSTEM_PACKAGES) >/dev/null); \
	fi

DEMO_FILE ?= /tmp/rntuple-demo-synthetic.root
DEMO_ENTRIES ?= 2000000

demo: build
	@if [ "$(CMS)" = "$(DEMO_MUONS)" ]; then \
		echo "== no shared test data (../shared/testdata): writing a small muon RNTuple of our own, $(DEMO_MUONS) =="; \
		python3 bench/demo_muons.py | $(BIN) import-json $(DEMO_MUONS) --ntuple Events --schema "$$(python3 bench/demo_muons.py --schema)"; \
	fi
	$(BIN) info $(CMS)
	$(BIN) dump $(CMS) --ntuple Events --entries 0:3
	@echo "== parallel write: $$(nproc) threads x $(DEMO_ENTRIES) synthetic entries into one file, then read back =="
	@$(BIN) bench write --threads $$(nproc) --entries $(DEMO_ENTRIES) --output $(DEMO_FILE) > /tmp/rntuple-demo-write.json
	@$(BIN) bench read $(DEMO_FILE) --ntuple Events > /tmp/rntuple-demo-read.json
	@python3 bench/demo_summary.py /tmp/rntuple-demo-write.json /tmp/rntuple-demo-read.json
	@$(BIN) info $(DEMO_FILE) | head -6
	$(BIN) check $(DEMO_FILE)
	@echo "== skim: eventId of the first cluster (one thread's $(DEMO_ENTRIES) entries: pages copied), then entries 10:20 (re-encoded) =="
	$(BIN) skim $(DEMO_FILE) /tmp/rntuple-demo-skim.root --fields eventId --entries 0:$(DEMO_ENTRIES)
	$(BIN) skim $(DEMO_FILE) /tmp/rntuple-demo-skim.root --entries 10:20
	@if command -v mpirun >/dev/null; then \
		echo "== distributed write: 2 MPI ranks x 200000 entries into one file (metadata strategy) =="; \
		$(MPIRUN) -np 2 $(BIN) bench write-mpi --strategy metadata --entries 200000 --output /tmp/rntuple-demo-mpi.root > /tmp/rntuple-demo-mpi.json \
		&& python3 -c "import json; d=json.load(open('/tmp/rntuple-demo-mpi.json')); print(f\"{d['entries']} entries from {d['ranks']} ranks in {d['seconds']:.2f} s ({d['entries_per_second']/1e6:.1f} M entries/s)\")" \
		&& $(BIN) check /tmp/rntuple-demo-mpi.root; \
	fi

# Byte-compiled at install (not --no-compile: with PYTHONDONTWRITEBYTECODE set, as on the CI machine, every Python
# process of the tests would compile what it imports from source again: bench/RESULTS.md).
$(VENV)/.installed: requirements-test.txt | mpi-deps
	python3 -m venv $(VENV)
	$(VENV)/bin/pip install --quiet --upgrade pip
	$(VENV)/bin/pip install --quiet -r requirements-test.txt
	touch $@

venv: $(VENV)/.installed

# The benchmarks' plots (matplotlib): not needed by `make test`.
$(VENV)/.bench-installed: requirements-bench.txt $(VENV)/.installed
	$(VENV)/bin/pip install --quiet -r requirements-bench.txt
	touch $@

bench-deps: $(VENV)/.bench-installed

# Unit and integration tests, then the doctests; the examples (developer tools) are not linked here, as a
# plain `cargo test` would (clippy --all-targets checks that they compile; the tests that run one build it).
cargo-test:
	cargo test --release $(WORKSPACE) --tests
	cargo test --release $(WORKSPACE) --doc

fuzz-smoke:
	bash fuzz/smoke.sh

# Longer runs of the randomized cross tests than `make test` does: 500 random schemas through ROOT and uproot,
# and 40 SIGKILLs of each checkpointing writer (make test: 8).
RANDOM_SEEDS_LONG ?= 500
CRASH_KILLS_LONG ?= 40
MPI_CRASH_KILLS_LONG ?= 60
test-long: venv build python
	RNTUPLE_RANDOM_SEEDS=$(RANDOM_SEEDS_LONG) RNTUPLE_BIN=$(abspath $(BIN)) $(PY) -m pytest -q tests/cross/test_random_schemas.py
	RNTUPLE_CRASH_KILLS=$(CRASH_KILLS_LONG) RNTUPLE_BIN=$(abspath $(BIN)) $(PY) -m pytest -q tests/cross/test_crash_checkpoint.py
	RNTUPLE_MPI_CRASH_KILLS=$(MPI_CRASH_KILLS_LONG) RNTUPLE_BIN=$(abspath $(BIN)) $(PY) -m pytest -q tests/cross/test_mpi_crash_checkpoint.py

# Every fuzz target at once for FUZZ_LONG_SECONDS of wall time (default an hour each), at the lowest
# CPU priority, with the smoke run's memory limits; logs and per-target CPU time in fuzz/logs/.
FUZZ_LONG_SECONDS ?= 3600
fuzz-long:
	FUZZ_OPT_LEVEL=3 FUZZ_PARALLEL=1 FUZZ_TIMEOUT=120 FUZZ_SECONDS=$(FUZZ_LONG_SECONDS) FUZZ_SECONDS_EACH=$(FUZZ_LONG_SECONDS) nice -n 19 bash fuzz/smoke.sh

# The Python package (python/, a PyO3 extension built by maturin), installed into $(VENV) in editable mode.
# python/ is a workspace of its own but builds in this one's target directory: with the same profile and
# dependency features it reuses what `make build` and `make lint` compiled.
python: venv
	cd python && CARGO_TARGET_DIR=$(abspath target) VIRTUAL_ENV=$(abspath $(VENV)) \
		$(abspath $(VENV))/bin/maturin develop --release --quiet $(PY_FEATURES)

# The binary wheel pip installs without a Rust toolchain (python/build_wheel.py): one abi3 wheel for CPython >= 3.9,
# manylinux_2_28 (zig links against glibc 2.28), with the `rntuple` command inside, checked by auditwheel; into
# target/wheels/. No MPI inside (rntuple.mpi says how to build with it); XrdCl loaded at run time for root://.
wheel: venv
	$(PY) python/build_wheel.py --out target/wheels

# tests/cross on CROSS_WORKERS pytest-xdist workers, a test file per worker at a time (its module fixtures are built
# once): most of its time is ROOT and cargo processes, which two vCPUs run side by side (bench/RESULTS.md).
# `-rs` lists every skip with its reason (the shared test files or a server missing), so that no skip goes unseen.
CROSS_WORKERS ?= 2
pytest: venv build python wheel
	RNTUPLE_BIN=$(abspath $(BIN)) $(PY) -m pytest -q -rs -n $(CROSS_WORKERS) --dist loadfile --durations=25 tests/cross
	RNTUPLE_BIN=$(abspath $(BIN)) $(PY) -m pytest -q -rs --durations=10 tests/hostile
	RNTUPLE_BIN=$(abspath $(BIN)) $(PY) -m pytest -q -rs --durations=10 tests/remote
	$(PY) -m pytest -q -rs --durations=10 tests/python
	$(PY) -m pytest -q -rs --durations=5 tests/c

# Formatting (rustfmt.toml), clippy and ruff (ruff.toml; ruff is pinned in requirements-test.txt).
lint: venv
	cargo fmt --all --check
	cargo clippy $(WORKSPACE) --all-targets --release -- -D warnings
	cd python && cargo fmt --check
	cd python && CARGO_TARGET_DIR=$(abspath target) cargo clippy --all-targets --release $(PY_FEATURES) -- -D warnings
	$(VENV)/bin/ruff check python tests bench .ci
	$(PY) .ci/check_layout.py
	$(PY) -m pytest -q .ci/test_check_layout.py
	$(PY) .ci/check_file_io.py --self-test
	$(PY) .ci/check_file_io.py
	$(PY) .ci/public_api.py --check
	@$(MAKE) --no-print-directory cbindgen
	@$(HEADER_CMD) --output target/rntuple.h.generated
	@diff -u include/rntuple.h target/rntuple.h.generated || (echo "include/rntuple.h differs from crates/rntuple-c: run 'make header'"; exit 1)

# The documentation site (docs/site: Sphinx + MyST + furo, pinned in requirements-docs.txt) into target/docs/html, with
# warnings as errors: the tutorial's and the migration pages' Python blocks and C++ output module are run first
# (docs/site/run_examples.py), the CLI reference is made from `$(BIN) --help` at build time (docs/site/cli_help.py,
# RNTUPLE_BIN), the Python reference from the installed package's docstrings; then every internal link and #anchor of
# the built pages is checked (docs/site/check_links.py; external links are not followed).
$(VENV)/.docs-installed: requirements-docs.txt $(VENV)/.installed
	$(VENV)/bin/pip install --quiet -r requirements-docs.txt
	touch $@

docs: venv build python $(VENV)/.docs-installed
	$(PY) docs/site/check_links.py --self-test
	$(PY) docs/site/run_examples.py
	rm -rf target/docs/html target/docs/doctrees
	RNTUPLE_BIN=$(abspath $(BIN)) $(VENV)/bin/sphinx-build -W --keep-going -q -b html -d target/docs/doctrees docs/site target/docs/html
	$(PY) docs/site/check_links.py target/docs/html

test: mpi-deps venv lint build cargo-test fuzz-smoke pytest docs

# The crash explorer (issue 54, crates/rntuple-crash): every recorded writer's crash states, thousands per workload, and
# the planted bug; `make test` judges a sample (tests/cross/test_crash_explorer.py). Report: target/crash-report.json.
.PHONY: test-crash
test-crash: mpi-deps build
	cargo test --release -p rntuple-crash --lib
	target/release/rntuple-crash --states 0 --scale 4 --subsets 16 --rntuple-bin $(abspath $(BIN)) --planted > target/crash-report.json

bench-read: venv bench-deps build
	$(PY) bench/read_bench.py

# The parallel-writer stress test under ThreadSanitizer (nightly with rust-src, std rebuilt instrumented;
# not part of `make test`: it needs the rust-src component and ~15 minutes).
tsan:
	rustup component add rust-src --toolchain nightly
	RUSTFLAGS="-Zsanitizer=thread" cargo +nightly test -Zbuild-std --target x86_64-unknown-linux-gnu \
		--target-dir target/tsan -p rntuple --test integration parallel_stress::

# Reading where the data is: local cold and warm, HTTP through a latency proxy (0, 10, 50 ms), S3 (moto);
# against uproot and ROOT (bench/io_bench.py). And the format comparison of the RNTuple papers.
bench-io: venv bench-deps build python
	$(PY) bench/io_bench.py

bench-formats: venv bench-deps build python
	$(PY) bench/formats_bench.py

bench-parallel-write: venv bench-deps build
	$(PY) bench/parallel_write_bench.py

# The distributed (MPI) write benchmark: strategies side by side, per-operation costs, the scaling model.
bench-mpi: venv bench-deps build
	$(PY) bench/mpi_write_bench.py

# The AGC-style NanoAOD skim into one file (the parallel-writing paper's Fig. 6): ours sequential, ParallelWriter,
# separate files + merge, ROOT's RDataFrame Snapshot (bench/agc_skim_bench.py).
bench-agc: venv bench-deps build python
	$(PY) bench/agc_skim_bench.py

# rntuple.join vs ROOT 6.40's RNTupleProcessor::CreateJoin vs pandas.merge on a 2 M-entry primary (bench/join_bench.py).
bench-join: venv python
	$(PY) bench/join_bench.py

# `rntuple merge --mode union` of 20 files vs hadd (same schema) and vs ROOT's union merge (bench/merge_bench.py).
bench-merge: venv build python
	$(PY) bench/merge_bench.py

# Dask (4 worker processes) and Spark at scale (issue 53): to_rntuple distributed vs merge vs uproot + hadd, rntuple.dask
# vs uproot.dask with a cut, Spark's rntuple source vs Spark on Parquet (bench/distributed_bench.py).
bench-distributed: venv bench-deps build python
	$(PY) bench/distributed_bench.py

# Wide schemas (issue 56): open + read of all 1,500 fields of a NanoAOD-like file from Python, ours vs uproot, with a
# profile of where our time goes (bench/wide_schema_bench.py; the file is written once into bench/data/).
bench-wide: venv bench-deps python
	$(PY) bench/wide_schema_bench.py

# Entry-by-entry reading in compiled C++ (issue 56): ROOT 6.40's RNTupleViews and LoadEntry vs rntuple_view.hpp's views and
# the C ABI's entry object, in order over 20 NanoAOD-like fields and at random over a tiny-event file (bench/event_loop_bench.py).
bench-event-loop: venv build
	$(PY) bench/event_loop_bench.py

# Many files on 2 threads scheduled by clusters (issue 56): Chain::map_clusters over 20 files (one holds half the entries)
# vs the same entries in one file vs ROOT 6.40's RDataFrame with EnableImplicitMT(2), the same sum (bench/scheduler_bench.py).
bench-scheduler: venv build
	$(PY) bench/scheduler_bench.py

# Compiled C++ writing NanoAOD-like events from threads: ROOT 6.40's RNTupleParallelWriter vs rntuple.hpp (the C ABI)
# vs the same events from Rust (bench/cpp_write_bench.py; it compiles the programs once, under target/).
bench-cpp-write: venv build
	$(PY) bench/cpp_write_bench.py

clean:
	cargo clean
	rm -rf $(VENV) tests/cross/generated bench/data
