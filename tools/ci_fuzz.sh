#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz, clang, ASan + UBSan) into
# build-fuzz and runs each for a bounded time on its seed corpus
# (tests/fuzz/corpus/<parser>). A crash, an uncaught exception other than
# the parser's InputError, a hang (one input over 10 s), a leak or an input
# using over 2 GB fails the run; the input that did it is kept in
# build-fuzz/artifacts/<parser>/ (copy it to tests/fuzz/regressions/<parser>/
# once fixed: docs/hardening.md) and printed, base64, in the log so that a
# CI failure can be replayed from the log alone. The seeds are the corpus and
# every regression input; libFuzzer's seed is fixed (PARASHIFT_FUZZ_SEED,
# default 1) so that a CI run repeats the same mutations.
# Usage: tools/ci_fuzz.sh [SECONDS per parser, default 45] [parser ...]
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${PARASHIFT_JOBS:-$(nproc)}
seconds=${1:-45}
shift || true
parsers=("$@")
if ((${#parsers[@]} == 0)); then
  parsers=(scenario dot graphml published_csv hf_config failure_trace calibration)
fi

start=$SECONDS
CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DPARASHIFT_BUILD_FUZZERS=ON \
  -DPARASHIFT_SANITIZE=address,undefined -DPARASHIFT_WERROR=OFF -DPARASHIFT_BUILD_TESTS=OFF \
  -DPARASHIFT_BUILD_BENCHMARKS=OFF -DPARASHIFT_WITH_CUDA=OFF >/dev/null
cmake --build build-fuzz -j "$jobs" --target "${parsers[@]/#/fuzz_}"
echo "parashift ci: fuzz build took $((SECONDS - start)) s"

export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
for p in "${parsers[@]}"; do
  t=fuzz_$p work=build-fuzz/corpus/$p artifacts=build-fuzz/artifacts/$p
  mkdir -p "$work" "$artifacts"
  log=build-fuzz/$t.log
  seeds=("tests/fuzz/corpus/$p")
  [[ -d tests/fuzz/regressions/$p ]] && seeds+=("tests/fuzz/regressions/$p")
  if build-fuzz/tests/fuzz/$t -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
      -seed="${PARASHIFT_FUZZ_SEED:-1}" -max_len=65536 -print_final_stats=1 \
      -artifact_prefix="$artifacts/" "$work" "${seeds[@]}" >"$log" 2>&1; then
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')
    echo "parashift ci: $t: $runs inputs in ${seconds} s, no crash, hang or leak"
  else
    status=1
    echo "parashift ci: $t FAILED (log $log, input in $artifacts):"
    grep -E 'ERROR|SUMMARY|Test unit written|terminate called|what\(\)' "$log" | head -20
    for input in "$artifacts"/*; do
      [[ -f $input ]] || continue
      echo "parashift ci: $(basename "$input") ($(stat -c %s "$input") bytes), base64:"
      head -c 8192 "$input" | base64
    done
  fi
done
exit $status
