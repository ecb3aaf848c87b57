#include "hw/model/synthetic_values.hpp"

#include "topologies/mix64.hpp"

namespace parashift::hw {

float synthetic_uniform(std::uint64_t seed, std::uint64_t what, std::uint64_t i, std::uint64_t j,
                        std::uint64_t k) {
  std::uint64_t h = topo::mix64(seed);
  h = topo::mix64(h ^ what);
  h = topo::mix64(h ^ i);
  h = topo::mix64(h ^ j);
  h = topo::mix64(h ^ k);
  // 24 random bits -> [0, 1) exactly representable in float, then [-1, 1).
  const float unit = static_cast<float>(h >> 40) / 16777216.0f;
  return 2.0f * unit - 1.0f;
}

void fill_synthetic(const SyntheticFill& f, float* out) {
  for (int r = 0; r < f.rows; ++r)
    for (int c = 0; c < f.cols; ++c) {
      const auto cu = static_cast<std::uint64_t>(c);
      const std::uint64_t column =
          (cu / f.col_block) * f.col_block_stride + f.col_offset + cu % f.col_block;
      out[static_cast<std::size_t>(r) * static_cast<std::size_t>(f.cols) + cu] =
          f.scale * synthetic_uniform(f.seed, f.what, f.row_offset + static_cast<std::uint64_t>(r),
                                      column, 0);
    }
}

}  // namespace parashift::hw
