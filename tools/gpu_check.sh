#!/usr/bin/env bash
# tools/gpu_check.sh [BUILD_DIR]: the CUDA + NCCL flavour on one GPU, in
# under 5 minutes. Builds parashift with PARASHIFT_WITH_CUDA=ON (Release), then
# on GPU 0: BF16 GEMM TFLOP/s (cuBLAS, CUDA events) against the H200's
# datasheet peak, the executor's GEMM shapes for tests/hw/data/gpu-1rank.yaml,
# and one iteration of that 1-GPU plan's GEMM list, measured against the time
# predicted from the calibrated rates. Exits 0 when it ran, 77 when the build
# succeeded but no GPU is visible (nothing to measure), 1 on any failure.
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
build=${1:-"$root/build-gpu"}
deadline_s=300
start_s=$SECONDS

echo "== configure + build (CUDA flavour) in $build"
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DPARASHIFT_WITH_CUDA=ON >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
if ! grep -q "building hw/ CUDA + NCCL flavour" "$build.configure.log"; then
  grep "parashift:" "$build.configure.log" || true
  echo "FAIL: the CUDA toolkit or NCCL was not found; the CUDA flavour was not configured"
  exit 1
fi
cmake --build "$build" -j"$(nproc)" --target parashift

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L >/dev/null 2>&1; then
  echo "built; no GPU visible (nvidia-smi): nothing to measure"
  exit 77
fi
nvidia-smi -L

left_s=$((deadline_s - (SECONDS - start_s)))
if [ "$left_s" -le 30 ]; then
  echo "FAIL: the build used the 5-minute budget"
  exit 1
fi
echo "== calibration and the 1-GPU plan (timeout ${left_s} s)"
timeout "$left_s" "$build/tools/parashift" calibrate --backend cuda --device 0 --peak-of h200 \
  --scenario "$root/tests/hw/data/gpu-1rank.yaml" --out "$build/gpu-profile.json"
echo "== the simulator's cost model for the same plan (datasheet h200)"
"$build/tools/parashift" run "$root/tests/hw/data/gpu-1rank.yaml" --backend sim | tail -1
echo "done in $((SECONDS - start_s)) s"
