#!/usr/bin/env bash
# `cmake --install` into a temporary prefix, then the installed binary, run
# from another folder, simulates the installed default scenario and finds its
# model presets under PREFIX/share/parashift (not in the source tree it was
# built from); with dpkg-deb present, `cpack -G DEB` makes a package holding
# the same layout. Usage: install_test.sh BUILD_DIR CMAKE CPACK
set -euo pipefail
build=$1 cmake=$2 cpack=$3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" >/dev/null
bin=$prefix/bin/parashift share=$prefix/share/parashift
cd "$work"

# The default what-if from the installed scenario: its iteration time line.
"$bin" simulate "$share/scenarios/default.yaml" >out.txt
grep -q '^iteration time ' out.txt || { echo "no iteration time in: $(cat out.txt)"; exit 1; }
# A shipped scenario naming its topology as ../topologies/h100-1k.dot.
"$bin" simulate "$share/scenarios/straggler-gpu-2x.yaml" >/dev/null
# The example policy plugin, named without a '/', loads from PREFIX/lib/parashift/plugins.
"$bin" simulate "$share/scenarios/plugin-speed-split.yaml" >out.txt
grep -q 'repartition \[' out.txt || { echo "the installed plugin made no directive: $(cat out.txt)"; exit 1; }

# A scenario outside the install names a preset: the presets searched are
# the installed ones, which the unknown-preset message lists.
cp "$share/scenarios/default.yaml" "$work/mine.yaml"
"$bin" simulate "$work/mine.yaml" >/dev/null
set +e
"$bin" simulate "$work/mine.yaml" --set model=no-such-model 2>err.txt
status=$?
set -e
[[ $status == 2 ]] || { echo "unknown preset exited $status, expected 2"; exit 1; }
grep -q "looked in $work/models and $share/scenarios/models" err.txt ||
  { echo "presets not looked up in the install: $(cat err.txt)"; exit 1; }

if command -v dpkg-deb >/dev/null; then
  (cd "$build" && "$cpack" -G DEB -B "$work/pkg" >/dev/null)
  deb=$(ls "$work"/pkg/parashift_*.deb)
  dpkg-deb -c "$deb" >contents.txt
  for f in ./usr/bin/parashift ./usr/share/parashift/scenarios/default.yaml \
    ./usr/share/parashift/scenarios/models/llama3-70b.yaml \
    ./usr/share/parashift/topologies/h100-1k.dot ./usr/share/doc/parashift/README.md \
    ./usr/lib/parashift/plugins/libspeed_split.so; do
    grep -q " $f\$" contents.txt || { echo "$deb lacks $f"; exit 1; }
  done
  dpkg-deb -f "$deb" Depends | grep -q libyaml-cpp0.7 || { echo "$deb: no Depends"; exit 1; }
fi
echo "install test: installed and packaged layout ok"
