// What one compressed data-parallel sync puts on the wire (the algorithms:
// core/compress/compression_spec.hpp).
#pragma once

#include <span>
#include <vector>

#include "core/compress/compression_spec.hpp"
#include "core/cost/work_profile.hpp"

namespace parashift::core {

/// A gradient matrix as a compressor sees it, `count` times (one per layer).
struct MatrixShape {
  double rows = 0;
  double cols = 0;
  double count = 1;
  double elements() const { return rows * cols; }
};

/// One collective of a sync, at nccl-tests' size (the whole buffer per rank;
/// all-gather: the gathered output).
struct WireCall {
  CollectiveKind kind = CollectiveKind::AllReduce;
  double bytes = 0;
};

/// The collectives that average `matrices` over `ranks` ranks with `spec`,
/// gradients of `elem_bytes` each when uncompressed (one batched call per
/// step, as a bucket is sent): none, one all-reduce; powersgd, the P and the
/// Q all-reduce; topk, one all-gather of every rank's pairs; int8, the
/// all-to-all and the all-gather of the quantised payload.
std::vector<WireCall> sync_calls(const CompressionSpec& spec, std::span<const MatrixShape> matrices,
                                 double elem_bytes, int ranks);

/// Bytes of a quantised int8 payload of `elements` in blocks of `block`.
double int8_payload_bytes(double elements, int block);
/// Entries top-k sends of a matrix of `elements`: max(1, round(F x elements)).
double topk_entries(double elements, double density);

}  // namespace parashift::core
