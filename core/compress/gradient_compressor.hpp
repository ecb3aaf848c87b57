// Compressed averaging of gradient matrices over a group of ranks, on real
// buffers (core/compress/compression.hpp names the algorithms and what they
// send). One GradientCompressor per rank keeps each matrix's state: the
// error-feedback residual (what was not sent, added to the next gradient)
// and PowerSGD's warm-started Q. Every rank of the group must call
// average() for the same tensors, in the same order, with the same shapes.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <vector>

#include "core/compress/compression.hpp"
#include "core/compress/reduce_group.hpp"

namespace parashift::core {

/// One matrix's compressor state on one rank.
struct CompressorState {
  std::vector<float> residual;        // error feedback, rows x cols (int8: padded)
  std::vector<float> q;               // PowerSGD: cols x rank, row-major
  std::vector<float> shard_residual;  // int8: the re-quantised shard's error
  /// Delayed sync (hw/exec/compressed_sync.cpp): the previous iteration's
  /// synced gradient, the one this iteration applies.
  std::vector<float> pending;
};

class GradientCompressor {
 public:
  /// `seed` draws PowerSGD's first Q, the same on every rank.
  GradientCompressor(CompressionSpec spec, std::uint64_t seed);

  /// Replaces `grad` (rows x cols, row-major) by this compressor's estimate
  /// of the group's mean of it; `tensor` keys the matrix's state. Returns
  /// the bytes this rank handed to the group's calls (nccl-tests' sizes, as
  /// sync_calls() counts them).
  double average(int tensor, std::span<float> grad, int rows, int cols, ReduceGroup& group);

  const CompressionSpec& spec() const { return spec_; }
  /// Each tensor's state, for tests and snapshots.
  const std::map<int, CompressorState>& states() const { return states_; }
  /// One tensor's state (empty when it has none yet), and its replacement
  /// (a restored snapshot, a layer moved in from another rank).
  CompressorState state(int tensor) const;
  void set_state(int tensor, CompressorState state);
  /// The state itself (made empty when absent).
  CompressorState& state_for(int tensor) { return states_[tensor]; }

 private:
  CompressionSpec spec_;
  std::uint64_t seed_;
  std::map<int, CompressorState> states_;
};

// The three algorithms (one file each); `grad` already holds grad + residual
// on entry and the mean estimate on return; each updates state.residual.
double powersgd_average(std::span<float> grad, int rows, int cols, int rank, CompressorState& state,
                        ReduceGroup& group);
double topk_average(std::span<float> grad, double density, CompressorState& state,
                    ReduceGroup& group);
double int8_average(std::span<float> grad, int block, CompressorState& state, ReduceGroup& group);

/// Block quantisation of `x` (size a multiple of `block`, a multiple of 4)
/// into `codes` (x.size() / 4 floats holding the int8 codes) and `scales`
/// (x.size() / block); `back` receives the dequantised values.
void int8_quantise(std::span<const float> x, int block, std::span<float> codes,
                   std::span<float> scales, std::span<float> back);
/// The values of a quantised block sequence, added into `out`.
void int8_add_dequantised(std::span<const float> codes, std::span<const float> scales, int block,
                          std::span<float> out);

}  // namespace parashift::core
