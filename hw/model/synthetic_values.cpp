#include "hw/model/synthetic_values.hpp"

namespace parashift::hw {

namespace {

std::uint64_t splitmix64(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

}  // namespace

float synthetic_uniform(std::uint64_t seed, std::uint64_t what, std::uint64_t i, std::uint64_t j,
                        std::uint64_t k) {
  std::uint64_t h = splitmix64(seed);
  h = splitmix64(h ^ what);
  h = splitmix64(h ^ i);
  h = splitmix64(h ^ j);
  h = splitmix64(h ^ k);
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
