#!/usr/bin/env bash
# Builds the fuzz targets and runs each briefly: read_file (whole files; FUZZ_SECONDS, default 30,
# seeded with the bundled test files), then the parsers one by one (FUZZ_SECONDS_EACH, default 10):
# envelopes (header/footer/page list, seeded with the test files' envelopes), decompress (ROOT's
# compression framing), type_names (C++ type names), decode_page (column decoding), structured
# (structurally valid files with valid checksums around arbitrary descriptors, built by
# rntuple::forge), expressions, streamer_objects (the StreamerInfo record and streamed objects).
# Every target runs with -rss_limit_mb=512 and -malloc_limit_mb=256: an input that
# makes the reader allocate beyond that is a finding. Installs cargo-fuzz when missing.
# `make fuzz-long` runs all targets at once (FUZZ_PARALLEL=1), each for FUZZ_LONG_SECONDS of wall time.
# FUZZ_OPT_LEVEL (default 1) is the optimization level of the fuzz build: at 1 it builds in ~4 min
# instead of ~6 and runs read_file at ~0.6x the executions per second with the same coverage
# (bench/RESULTS.md); `make fuzz-long` builds at 3.
set -euo pipefail
cd "$(dirname "$0")"
SECONDS_TO_RUN="${FUZZ_SECONDS:-30}"
SECONDS_EACH="${FUZZ_SECONDS_EACH:-10}"
# Only the fuzz workspace's build: the seeds below are cut by the main workspace's release build.
FUZZ_ENV=(env "CARGO_PROFILE_RELEASE_OPT_LEVEL=${FUZZ_OPT_LEVEL:-1}")
TESTDATA="${RNTUPLE_TESTDATA:-$(cd ../.. && pwd)/shared/testdata}"
if ! command -v cargo-fuzz >/dev/null 2>&1; then
    echo "fuzz: installing cargo-fuzz"
    cargo install --locked cargo-fuzz
fi
# cargo-fuzz needs unstable compiler flags: use nightly when installed, else let the stable
# compiler accept them.
if rustup toolchain list 2>/dev/null | grep -q '^nightly'; then
    FUZZ=("${FUZZ_ENV[@]}" cargo +nightly fuzz)
else
    export RUSTC_BOOTSTRAP=1
    FUZZ=("${FUZZ_ENV[@]}" cargo fuzz)
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
"${FUZZ[@]}" build
mkdir -p corpus/envelopes corpus/decompress corpus/type_names corpus/decode_page corpus/structured corpus/streamer_objects
if [ -d "$TESTDATA/rntuple" ]; then
    # The envelopes target takes payloads, not files: cut them out of the test files.
    (cd .. && cargo run --quiet --release --example fuzz_seeds -- fuzz/corpus/envelopes "$TESTDATA"/rntuple/*.root "$TESTDATA"/v1-older/*.root)
fi
printf 'std::vector<std::pair<std::int32_t, ROOT::VecOps::RVec<float>>>' > corpus/type_names/seed_vector
printf 'std::map<std::string, std::array<std::optional<std::variant<float, bool>>, 3>>' > corpus/type_names/seed_map
mkdir -p corpus/expressions
printf 'nJet >= 1 && count(Jet_pt > 25 && abs(Jet_eta) < 2.4) >= 1 || any(El.pt * -2 > max(Muon_pt))' > corpus/expressions/seed_where
printf 'Jet_pt > 20 + event %% 5 && !(sum(El.q) == 1)' > corpus/expressions/seed_filter
# Leaks are not what this run looks for: besides libFuzzer's own check (-detect_leaks=0), AddressSanitizer's
# check at process exit is turned off too. It can report the thread-local buffers of a reading thread
# whose scope has ended but whose OS thread is still tearing down when the process exits (seen once in CI).
# The memory limits of issue 14: what a file can make the reader allocate is bounded by what it backs.
# AddressSanitizer's quarantine of freed memory (256 MB by default) counts towards the RSS limit; a
# smaller one keeps the limit about the reader's own memory.
LIMITS=(-rss_limit_mb=512 -malloc_limit_mb=256)
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}quarantine_size_mb=64"
export ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0"
TARGETS=(read_file envelopes decompress type_names decode_page structured expressions streamer_objects)
# libFuzzer's -timeout is wall-clock time. The long run shares the machine at the lowest priority
# (nice 19): a unit that takes 0.7 s alone was once starved past 20 s there, so it allows 120 s.
TIMEOUT="${FUZZ_TIMEOUT:-20}"
run_target() {
    local target="$1" seconds="$2"
    "${FUZZ[@]}" run "$target" "corpus/$target" -- -max_total_time="$seconds" -max_len=65536 "${LIMITS[@]}" -timeout="$TIMEOUT" -detect_leaks=0
}
if [ "${FUZZ_PARALLEL:-0}" = "1" ]; then
    # All targets at once (make fuzz-long), each for SECONDS_EACH of wall time, logs in fuzz/logs/;
    # each log ends with libFuzzer's run count and the CPU time the target used (`times`).
    mkdir -p logs
    pids=()
    for target in "${TARGETS[@]}"; do
        ( run_target "$target" "$SECONDS_EACH" && status=0 || status=$?; times; exit $status ) >"logs/$target.log" 2>&1 &
        pids+=($!)
    done
    failed=0
    for i in "${!TARGETS[@]}"; do
        if ! wait "${pids[$i]}"; then
            echo "fuzz: ${TARGETS[$i]} found something: see fuzz/logs/${TARGETS[$i]}.log and fuzz/artifacts/${TARGETS[$i]}/" >&2
            failed=1
        fi
    done
    for target in "${TARGETS[@]}"; do
        runs=$(grep -o 'Done [0-9]* runs in [0-9]* second(s)' "logs/$target.log" | tail -1)
        cpu=$(tail -2 "logs/$target.log" | tail -1)
        echo "fuzz: $target: ${runs:-no summary}; CPU time (user, system) of its processes: $cpu"
    done
    [ "$failed" = 0 ] || exit 1
    echo "fuzz: every target ran ${SECONDS_EACH}s at once, with ${LIMITS[*]}, without a finding"
    exit 0
fi
run_target read_file "$SECONDS_TO_RUN"
for target in "${TARGETS[@]:1}"; do
    run_target "$target" "$SECONDS_EACH"
done
echo "fuzz: read_file ran ${SECONDS_TO_RUN}s, envelopes, decompress, type_names, decode_page, structured, expressions and streamer_objects ${SECONDS_EACH}s each, with ${LIMITS[*]}, without a crash"
