#!/usr/bin/env bash
# README command 2: install what is missing, build, run the whole test suite.
# CI (.ci/run) sets PARASHIFT_CI=1: then the sanitizer builds
# (tools/ci_sanitize.sh) and the bounded fuzz runs (tools/ci_fuzz.sh) follow.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
start=$SECONDS
"$root/tools/install-deps.sh"
"$root/tools/build.sh"
cd "$root/build"
# Timing-dependent hardware checks (label `timing`) run with `ctest -L timing`.
ctest --output-on-failure -j "${PARASHIFT_JOBS:-$(nproc)}" -LE timing
echo "parashift: build and tests took $((SECONDS - start)) s"
if [[ ${PARASHIFT_CI:-0} == 1 ]]; then
  # CI stops a run at 90 minutes and CI machines differ by 2x in speed: the
  # TSan and fuzz stages run only while the run's budget (75 minutes) has
  # room for what each took on a slow machine; a skip says so in the log.
  budget=${PARASHIFT_CI_BUDGET_S:-4500}
  if_time() {
    local name=$1 need=$2 spent=$((SECONDS - start))
    shift 2
    if ((spent + need > budget)); then
      echo "parashift ci: $name SKIPPED: $spent s spent of the $budget s budget, it needs about $need s (run it alone: $*)"
      return 0
    fi
    "$@"
  }
  "$root/tools/ci_sanitize.sh" asan
  if_time "tsan stage" 800 "$root/tools/ci_sanitize.sh" tsan
  if_time "fuzz stage" 800 "$root/tools/ci_fuzz.sh" "${PARASHIFT_FUZZ_SECONDS:-45}"
  echo "parashift ci: everything took $((SECONDS - start)) s"
fi
