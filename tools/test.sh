#!/usr/bin/env bash
# README command 2: install what is missing, build, run the whole test suite.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh"
cd "$root/build"
# Timing-dependent hardware checks (label `timing`) run with `ctest -L timing`.
ctest --output-on-failure -j "${PARASHIFT_JOBS:-$(nproc)}" -LE timing
