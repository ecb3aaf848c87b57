#!/usr/bin/env bash
# Every picture parashift draws renders: simulate --svg, sweep --plot, topo
# --svg and faults --svg are each converted to PNG by rsvg-convert (Debian's
# librsvg2-bin) and must come out the size the SVG says, with at least 4
# colours (a blank or failed render is 1: white). Usage: svg_render_test.sh PARASHIFT SOURCE_DIR
set -euo pipefail
bin=$1 src=$2
for tool in rsvg-convert pngtopnm ppmhist; do
  if ! command -v "$tool" >/dev/null; then
    # tools/install-deps.sh installs both packages; CI must have them.
    if [[ ${PARASHIFT_CI:-0} == 1 ]]; then echo "$tool missing (librsvg2-bin, netpbm)"; exit 1; fi
    echo "skipped: $tool missing (tools/install-deps.sh installs librsvg2-bin and netpbm)"
    exit 77
  fi
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

"$bin" simulate "$src/scenarios/default.yaml" --svg pipeline.svg >/dev/null
"$bin" sweep "$src/scenarios/default.yaml" --set plan.dp=null \
  --grid cluster.topology.nodes=8,16 --grid plan.tp=4,8 --csv s.csv --plot sweep.svg >/dev/null
"$bin" topo "$src/topologies/h100-1k.dot" --svg topology.svg >/dev/null
"$bin" faults "$src/scenarios/faults-llama3-405b-16k.yaml" --seeds 2 --days 1 \
  --svg campaign.svg >/dev/null

for svg in pipeline sweep topology campaign; do
  rsvg-convert "$svg.svg" -o "$svg.png"
  pngtopnm "$svg.png" >"$svg.ppm"
  # The PPM header's width and height against the SVG's own.
  # (No `head` on a pipe's right: with pipefail its early exit fails the line.)
  read -r w h < <(dd if="$svg.ppm" bs=64 count=1 2>/dev/null | tr -s ' \n' ' ' | cut -d' ' -f2,3)
  want_w=$(grep -o -m1 'width="[0-9.]*"' "$svg.svg" | sed -n 1p | tr -dc '0-9.')
  want_h=$(grep -o -m1 'height="[0-9.]*"' "$svg.svg" | sed -n 1p | tr -dc '0-9.')
  if [[ $w != "${want_w%.*}" || $h != "${want_h%.*}" ]]; then
    echo "$svg: rendered ${w}x$h, the SVG says ${want_w}x$want_h"
    exit 1
  fi
  colours=$(ppmhist -noheader "$svg.ppm" | wc -l)
  if ((colours < 4)); then
    echo "$svg: $colours colours in the rendered PNG (blank?)"
    exit 1
  fi
  echo "$svg: ${w}x$h, $colours colours"
done
