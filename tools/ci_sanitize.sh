#!/usr/bin/env bash
# CI's sanitizer runs (tools/test.sh calls this when PARASHIFT_CI=1, as .ci/run sets):
#   build-asan: the whole test suite (ctest -LE timing) under AddressSanitizer +
#               UndefinedBehaviorSanitizer; any report fails the run;
#   build-tsan: the thread-communicator (test_hw) and controller suites, and
#               the controller contract on threaded executor ranks, under
#               ThreadSanitizer.
# Benchmarks and the CUDA flavour are left out (CMakePresets.json: asan, tsan).
# Warnings are errors in the ordinary build only: GCC 12's sanitizer
# instrumentation reports false -Wuninitialized positives inside Boost's
# headers (boost::optional in named_graph.hpp).
# Usage: tools/ci_sanitize.sh [asan|tsan]   (default both)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
jobs=${PARASHIFT_JOBS:-$(nproc)}
which=${1:-all}

# Reports stop the test that hit them (non-zero exit); leaks in OpenMPI's own
# start-up are not ours (tools/ci_lsan.supp).
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:strict_string_checks=1:detect_stack_use_after_return=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$root/tools/ci_lsan.supp:print_suppressions=0}
export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
# OpenMPI refuses to start as root without these (CI containers run as root).
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

stage() {
  local name=$1 start=$SECONDS
  shift
  "$@"
  echo "parashift ci: $name took $((SECONDS - start)) s"
}

if [[ $which == all || $which == asan ]]; then
  stage "asan configure" cmake --preset asan >/dev/null
  stage "asan build" cmake --build build-asan -j "$jobs"
  # Tests that launch ranks under mpirun run without the leak check:
  # OpenMPI's libraries keep allocations until exit and, built without frame
  # pointers, show them with no stack LeakSanitizer could match by library
  # name (tools/ci_lsan.supp). Memory errors and undefined behaviour still fail them.
  # The mutation check (40 whole simulate runs) stays in the ordinary suite:
  # under ASan it runs for over 5 minutes, while the fuzzers cover the parsers.
  # `collectives --backend hw` starts MPI too (under mpirun, or as a singleton
  # that refuses to run alone).
  mpirun_tests='^hw\.(mpi_check|mpi_contract|kill_restore|calibrate|elastic|reshard_relaunch)|^loop\.run_hw|^collectives(\.hw| --backend hw)'
  # The longest runs of 4 ranks on 2 cores (170 to 250 s each under ASan,
  # against a 300 s limit) stay in the ordinary suite: the text task's
  # convergence runs and the synthetic task's 50 iterations of
  # loop.run_hw.sync_degrade.np4. The compressors and the loop's live sync
  # switch they drive run here in compression_test.cpp and
  # loop.run_hw.sync_guard.np4.
  convergence='tiny language model learns|^loop\.run_hw\.(text_sync|sync_degrade)\.np4$'
  stage "asan tests" ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE timing \
    -E "$mpirun_tests|^tools\.scenario_mutation$|$convergence"
  stage "asan tests under mpirun" env ASAN_OPTIONS="$ASAN_OPTIONS:detect_leaks=0" \
    ctest --test-dir build-asan --output-on-failure -j "$jobs" -LE timing -R "$mpirun_tests" \
    -E "$convergence"
  # CI's disk is the machine's, shared and sometimes nearly full: a passed
  # stage's build (some GB with debug info) goes before the next is built.
  if [[ ${PARASHIFT_CI:-0} == 1 ]]; then rm -rf build-asan; fi
fi

if [[ $which == all || $which == tsan ]]; then
  stage "tsan configure" cmake --preset tsan >/dev/null
  stage "tsan build" cmake --build build-tsan -j "$jobs" --target test_hw test_controller test_hw_policy
  # setarch -R: TSan of GCC 12 needs the address layout without randomisation
  # on kernels with high mmap entropy; fall back to a plain run where it is missing.
  run=()
  if setarch "$(uname -m)" -R true 2>/dev/null; then run=(setarch "$(uname -m)" -R); fi
  # Less the text task's convergence runs (5 x 150 iterations: minutes under
  # TSan), whose ranks run the threads compression_test.cpp runs.
  stage "tsan thread communicator" "${run[@]}" build-tsan/tests/hw/test_hw \
    -tce="*tiny language model*"
  stage "tsan controller" "${run[@]}" build-tsan/tests/core/controller/test_controller
  # The contract on threaded executor ranks: its recovery case restarts them.
  stage "tsan executor contract" "${run[@]}" build-tsan/tests/hw/test_hw_policy \
    -tc="*contract*,*recovery*"
  if [[ ${PARASHIFT_CI:-0} == 1 ]]; then rm -rf build-tsan; fi
fi
