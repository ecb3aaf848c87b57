// Gradient compression for the data-parallel sync: which compressor a plan
// uses (plan.compression). What each one sends: core/compress/compression.hpp.
//
//   powersgd:R  PowerSGD (Vogels, Karimireddy and Jaggi, NeurIPS 2019): an
//               m x n gradient matrix M goes as P = M Q (m x R) and then
//               Q = M^T P (n x R), both all-reduced in fp32, with P made
//               orthonormal between them and Q kept as the next iteration's
//               start (one power-iteration step per iteration).
//   topk:F      top-k sparsification (Stich, Cordonnier and Jaggi, NeurIPS
//               2018; Lin et al., ICLR 2018): each rank keeps the share F of
//               entries largest in magnitude, all-gathered as (index, value)
//               pairs of 4 + 4 bytes.
//   int8[:B]    block quantisation as ZeRO++'s qgZ runs it (Wang et al.
//               2023): blocks of B elements as int8 with one fp32 scale each
//               (max |x| / 127); an all-to-all of the quantised shards, a sum
//               of each shard where it lands, and an all-gather of the
//               re-quantised sums.
// Each keeps what it did not send (error feedback, Seide et al. 2014;
// Karimireddy et al. 2019) and adds it to the next iteration's gradient.
#pragma once

#include <string>

namespace parashift::core {

enum class CompressorKind { None, PowerSgd, TopK, Int8 };

struct CompressionSpec {
  CompressorKind kind = CompressorKind::None;
  int rank = 0;          // powersgd: columns of P and Q
  double density = 0.0;  // topk: share of entries sent, in (0, 1)
  int block = 0;         // int8: elements per fp32 scale
  bool enabled() const { return kind != CompressorKind::None; }
  bool operator==(const CompressionSpec&) const = default;
};

/// ZeRO++'s quantisation block size is a tuning knob; 256 elements keep the
/// scales at 1/64 of the int8 payload.
constexpr int kDefaultInt8Block = 256;

/// "none", "powersgd:R" (R >= 1), "topk:F" (0 < F < 1) or "int8" /
/// "int8:B" (B a multiple of 4, >= 4); throws InputError naming the form
/// expected and the text found.
CompressionSpec parse_compression(const std::string& text);
/// The same text parse_compression reads ("powersgd:4", "topk:0.01", "int8:256").
std::string to_string(const CompressionSpec& spec);

}  // namespace parashift::core
