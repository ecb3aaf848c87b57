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
  # CI stops a run at 90 minutes, and its machines' speed differs by 2x from
  # run to run. Each later stage runs only where the budget (5,000 s) has
  # room for it, its time predicted from this machine's: the stage's time
  # on the reference run (docs/hardening.md: ordinary stage 1,104 s, ASan
  # 2,192 s, TSan 639 s, fuzz build 316 s + 7 x 30 s) scaled by how long
  # the ordinary stage took here. A skipped stage says so, with its command.
  budget=${PARASHIFT_CI_BUDGET_S:-5000}
  ordinary_s=$((SECONDS - start))
  if_time() {
    local name=$1 reference_s=$2 spent=$((SECONDS - start))
    shift 2
    local need=$((reference_s * ordinary_s / 1104))
    if ((spent + need > budget)); then
      echo "parashift ci: $name SKIPPED: $spent s spent of the $budget s budget, it needs about $need s (run it alone: $*)"
      return 0
    fi
    "$@"
  }
  if_time "asan stage" 2200 "$root/tools/ci_sanitize.sh" asan
  if_time "tsan stage" 650 "$root/tools/ci_sanitize.sh" tsan
  if_time "fuzz stage" 550 "$root/tools/ci_fuzz.sh" "${PARASHIFT_FUZZ_SECONDS:-30}"
  echo "parashift ci: everything took $((SECONDS - start)) s"
fi
