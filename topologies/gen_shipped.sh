#!/bin/sh
# Regenerates the shipped topology files with parashift_topogen.
#   topologies/gen_shipped.sh [BUILD_DIR]      (BUILD_DIR defaults to ./build)
# Build the tool first: cmake --build BUILD_DIR --target parashift_topogen
set -eu
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
gen="$build/topologies/parashift_topogen"
"$gen" rail-fat-tree nodes=128 node=dgx-h100 tiers=2 oversubscription=1 -o "$here/h100-1k.dot"
"$gen" rail-fat-tree nodes=2048 node=dgx-h100 tiers=3 oversubscription=1 -o "$here/h100-16k.dot"
ls -l "$here/h100-1k.dot" "$here/h100-16k.dot"
