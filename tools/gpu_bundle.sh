#!/usr/bin/env bash
# tools/gpu_bundle.sh pack BUILD_DIR BUNDLE_DIR | unpack BUNDLE_DIR
#
# Runs tools/gpu_check.sh on a GPU machine that has the CUDA driver, toolkit
# and NCCL but none of parashift's build dependencies (a bare cloud image):
#   pack   (here, after a CUDA-flavour build): copies parashift and
#          hw_cuda_conformance into BUNDLE_DIR/build and downloads the Debian
#          packages of their runtime libraries (OpenMPI and its plugins'
#          libraries, yaml-cpp, Boost.Graph, ICU) into BUNDLE_DIR/debs;
#   unpack (there, as root): unpacks those packages and copies every file the
#          machine does not already have into / (never replacing one), then
#          prints the LD_LIBRARY_PATH that finds cuBLAS, the CUDA runtime and
#          NCCL wherever that machine keeps them (toolkit or Python wheels).
# Then: PARASHIFT_GPU_PREBUILT=1 tools/gpu_check.sh BUNDLE_DIR/build
set -euo pipefail

usage() {
  echo "usage: gpu_bundle.sh pack BUILD_DIR BUNDLE_DIR | unpack BUNDLE_DIR" >&2
  exit 2
}
[ $# -ge 2 ] || usage
packages=(libopenmpi3 openmpi-bin openmpi-common libpmix2 libhwloc15 libevent-core-2.1-7
  libevent-pthreads-2.1-7 libevent-2.1-7 libmunge2 libnuma1 libfabric1 libucx0 libibverbs1
  librdmacm1 libnl-3-200 libnl-route-3-200 libpsm2-2 libpsm-infinipath1 ibverbs-providers
  libyaml-cpp0.7 libboost-graph1.74.0 libboost-regex1.74.0 libicu72 libudev1)

case $1 in
  pack)
    [ $# -eq 3 ] || usage
    build=$2 bundle=$3
    for f in tools/parashift tests/hw/hw_cuda_conformance; do
      [ -x "$build/$f" ] || { echo "$build/$f: not built (build the CUDA flavour first)" >&2; exit 2; }
      mkdir -p "$bundle/build/$(dirname "$f")"
      cp "$build/$f" "$bundle/build/$f"
    done
    mkdir -p "$bundle/debs"
    (cd "$bundle/debs" && apt-get download "${packages[@]}")
    du -sh "$bundle"
    ;;
  unpack)
    [ $# -eq 2 ] || usage
    bundle=$(cd "$2" && pwd)
    root=$(mktemp -d)
    for deb in "$bundle"/debs/*.deb; do dpkg-deb -x "$deb" "$root"; done
    # File by file, never replacing one: the machine's own libraries (libc,
    # libstdc++, zlib) stay, and /lib may be a link to /usr/lib (merged /usr).
    (cd "$root" && find . -type f -o -type l) | while read -r f; do
      target=/${f#./}
      [ -e "$target" ] || [ -L "$target" ] && continue
      mkdir -p "$(dirname "$target")"
      cp -a "$root/$f" "$target"
    done
    # dpkg's alternatives are not run: mpirun is OpenMPI's when none is there.
    [ -e /usr/bin/mpirun ] || ln -s mpirun.openmpi /usr/bin/mpirun
    ldconfig 2>/dev/null || true
    dirs=""
    for lib in libcudart.so.13 libcublas.so.13 libcublasLt.so.13 libnccl.so.2; do
      found=$(find /usr/local /usr/lib /opt -name "$lib" 2>/dev/null | head -1 || true)
      [ -n "$found" ] || { echo "gpu_bundle.sh: $lib not found on this machine" >&2; exit 1; }
      case ":$dirs:" in *":$(dirname "$found"):"*) ;; *) dirs=${dirs:+$dirs:}$(dirname "$found") ;; esac
    done
    echo "export LD_LIBRARY_PATH=$dirs\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    ;;
  *) usage ;;
esac
