#!/usr/bin/env bash
# Installs the Debian packages parashift builds with, when any is missing.
# Idempotent: a machine that has them all gets no apt-get call at all.
set -euo pipefail

# clang and libclang-rt-dev: libFuzzer for tests/fuzz (tools/ci_fuzz.sh); libssl-dev:
# SHA-256 of snapshot shards. GCC's own sanitizer runtimes come with g++.
# librsvg2-bin and netpbm: the picture tests render each SVG to PNG and count its
# colours (tests/tools/svg_render_test.sh).
packages=(
  g++ cmake make ccache
  libboost-graph-dev libeigen3-dev libcli11-dev doctest-dev libbenchmark-dev
  libyaml-cpp-dev nlohmann-json3-dev libopenmpi-dev openmpi-bin libssl-dev
  clang libclang-rt-dev
  librsvg2-bin netpbm
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if ((${#missing[@]})); then
  echo "parashift: installing ${missing[*]}"
  sudo_cmd=()
  if [[ $(id -u) -ne 0 ]]; then sudo_cmd=(sudo); fi
  "${sudo_cmd[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
