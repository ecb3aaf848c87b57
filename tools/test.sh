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
  "$root/tools/ci_sanitize.sh" asan
  "$root/tools/ci_sanitize.sh" tsan
  "$root/tools/ci_fuzz.sh" "${PARASHIFT_FUZZ_SECONDS:-45}"
  echo "parashift ci: everything took $((SECONDS - start)) s"
fi
