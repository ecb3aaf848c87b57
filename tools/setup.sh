#!/usr/bin/env bash
# README command 1: install what is missing, build, run the default what-if.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/tools/install-deps.sh"
"$root/tools/build.sh"
"$root/build/tools/parashift" simulate "$root/scenarios/default.yaml"
