// The executor's exact work for one layer, one micro-batch, on one rank, as a
// list of kernels (the device layer runs exactly these; layer.cpp, its
// reference, does the same math without the kept dy copy, sequence
// parallelism or recompute): GEMMs by shape and operand transposition,
// element-wise kernels by element count, streaming copies and adds by bytes,
// and the tensor-parallel collectives. Calibration measures
// each kernel; the predictor (hw/calib/predict.hpp) adds them up.
#pragma once

#include <string>
#include <vector>

#include "core/parallel_plan.hpp"
#include "hw/model/layer.hpp"

namespace parashift::hw {

/// C (m x n) = op(A) (m x k) * op(B) (k x n), row-major fp32, `count` times.
struct GemmOp {
  int m = 0, n = 0, k = 0;
  bool a_transposed = false, b_transposed = false;
  int count = 1;
  double flops() const { return 2.0 * m * n * static_cast<double>(k) * count; }
  bool same_kernel(const GemmOp& o) const {
    return m == o.m && n == o.n && k == o.k && a_transposed == o.a_transposed &&
           b_transposed == o.b_transposed;
  }
};

/// The element-wise kernels of pointwise.hpp.
enum class PointwiseKind { Gelu, GeluBackward, CausalSoftmax, CausalSoftmaxBackward };
const char* to_string(PointwiseKind kind);

struct PointwiseOp {
  PointwiseKind kind = PointwiseKind::Gelu;
  int rows = 0, cols = 0;  // one call's matrix
  int count = 1;
  double elements() const { return static_cast<double>(rows) * cols * count; }
};

struct LayerOps {
  std::vector<GemmOp> gemms;
  std::vector<PointwiseOp> pointwise;
  double stream_bytes = 0;  // residual adds, copies, stash (read + write)
  int tp_all_reduces = 0;   // each of tokens x hidden fp32 (0 when tp = 1)
  // Sequence parallelism instead: all-gathers and reduce-scatters, each of
  // a tokens x hidden fp32 buffer gathered or scattered (tp_bytes_each).
  int tp_all_gathers = 0, tp_reduce_scatters = 0;
  double tp_bytes_each = 0;
};

LayerOps layer_forward_ops(const LayerShape& shape);
/// The whole backward: the input-gradient pass, then the weight pass.
LayerOps layer_backward_ops(const LayerShape& shape);
/// ZB-H1's halves of it (device_layer_backward_input / _weight).
LayerOps layer_backward_input_ops(const LayerShape& shape);
LayerOps layer_backward_weight_ops(const LayerShape& shape);
/// What the input-gradient pass reruns first under `recompute`: nothing;
/// the scores GEMMs and the softmax (selective); the whole forward, its
/// tensor-parallel all-reduces included, less the stash copy (full).
LayerOps layer_recompute_ops(const LayerShape& shape, core::Recompute recompute);

/// The FLOPs of every GEMM in `ops`.
double gemm_flops(const LayerOps& ops);

/// The counted units of recompute (ComputeClock::Counted): its GEMMs' FLOPs
/// over the forward's, 0 for none, 1 for full, the scores' share for selective.
double recompute_units(const LayerShape& shape, core::Recompute recompute);

/// The distinct GEMM kernels of a layer's forward and backward (calibration's list).
std::vector<GemmOp> distinct_gemms(const LayerShape& shape);

}  // namespace parashift::hw
