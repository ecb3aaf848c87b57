// Counter-based values of the synthetic model: every weight and every input
// element is a pure function of (seed, what, i, j, k), so each tensor-parallel
// shard holds exactly its slice of one global tensor and every plan trains
// the same model on the same data (splitmix64 of a combined key).
#pragma once

#include <cstddef>
#include <cstdint>

namespace parashift::hw {

/// Uniform in [-1, 1), a function of the seed and four coordinates only.
float synthetic_uniform(std::uint64_t seed, std::uint64_t what, std::uint64_t i, std::uint64_t j,
                        std::uint64_t k);

/// A rows x cols shard of a global synthetic matrix `what`: element (r, c)
/// is scale x synthetic_uniform(seed, what, row_offset + r, global column,
/// 0), the global column (c / col_block) x col_block_stride + col_offset +
/// c % col_block (a tensor-parallel slice, or Q/K/V parts of one). The same
/// spec fills host memory here and device memory in the device kernels.
struct SyntheticFill {
  int rows = 0, cols = 0;
  std::uint64_t seed = 0, what = 0;
  std::uint64_t row_offset = 0;
  std::uint64_t col_block = 1, col_block_stride = 0, col_offset = 0;
  float scale = 1.0f;
};

/// Fills `out` (rows x cols, row-major) as the spec says.
void fill_synthetic(const SyntheticFill& fill, float* out);

}  // namespace parashift::hw
