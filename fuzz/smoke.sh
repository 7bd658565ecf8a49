#!/usr/bin/env bash
# Builds the reader's fuzz target and runs it briefly (FUZZ_SECONDS, default 60) on a seed
# corpus made of the bundled test files. Installs cargo-fuzz when missing.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_TO_RUN="${FUZZ_SECONDS:-60}"
TESTDATA="${RNTUPLE_TESTDATA:-$(cd ../.. && pwd)/shared/testdata}"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi
# cargo-fuzz needs unstable compiler flags: use nightly when installed, else let the stable
# compiler accept them.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    FUZZ=(cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    FUZZ=(cargo fuzz)
fi
mkdir -p corpus/read_file
if [ -d "$TESTDATA/rntuple" ]; then
    for f in "$TESTDATA"/rntuple/*.root "$TESTDATA"/v1-older/*.root "$TESTDATA"/legacy/*.root; do
        # Keep the seeds small: libFuzzer's default input limit is a few KB.
        if [ "$(stat -c %s "$f")" -lt 40000 ]; then cp -f "$f" corpus/read_file/; fi
    done
elif [ "${CI:-}" = "true" ]; then
    echo "fuzz: test data $TESTDATA missing under CI" >&2; exit 1
fi
"${FUZZ[@]}" build read_file
# Leaks are not what this run looks for: besides libFuzzer's own check (-detect_leaks=0), AddressSanitizer's
# check at process exit is turned off too. It can report the thread-local buffers of a reading thread
# whose scope has ended but whose OS thread is still tearing down when the process exits (seen once in CI).
ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0" \
    "${FUZZ[@]}" run read_file corpus/read_file -- -max_total_time="$SECONDS_TO_RUN" -max_len=65536 -rss_limit_mb=4096 -timeout=20 -detect_leaks=0
echo "fuzz: read_file ran ${SECONDS_TO_RUN}s without a crash"
