// Counter-based values of the synthetic model: every weight and every input
// element is a pure function of (seed, what, i, j, k), so each tensor-parallel
// shard holds exactly its slice of one global tensor and every plan trains
// the same model on the same data (splitmix64 of a combined key).
#pragma once

#include <cstdint>

namespace parashift::hw {

/// Uniform in [-1, 1), a function of the seed and four coordinates only.
float synthetic_uniform(std::uint64_t seed, std::uint64_t what, std::uint64_t i, std::uint64_t j,
                        std::uint64_t k);

}  // namespace parashift::hw
