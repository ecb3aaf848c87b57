#!/usr/bin/env bash
# Configures and builds parashift into build/ (Release, ccache when present).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
jobs=${PARASHIFT_JOBS:-$(nproc)}
cmake -S "$root" -B "$root/build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$root/build" -j "$jobs"
