// Top-k averaging with error feedback: each rank sends the entries of
// (gradient + residual) largest in magnitude as (index, value) pairs, every
// rank gathers all ranks' pairs and averages them; what a rank did not send
// stays in its residual. Ties break by index, so every run picks the same.
#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <numeric>

#include "core/compress/gradient_compressor.hpp"

namespace parashift::core {

double topk_average(std::span<float> grad, double density, CompressorState& state,
                    ReduceGroup& group) {
  const std::size_t n = grad.size();
  const auto k = static_cast<std::size_t>(topk_entries(static_cast<double>(n), density));
  std::vector<std::uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  auto larger = [&](std::uint32_t a, std::uint32_t b) {
    const float ma = std::fabs(grad[a]);
    const float mb = std::fabs(grad[b]);
    return ma != mb ? ma > mb : a < b;
  };
  std::nth_element(order.begin(), order.begin() + static_cast<std::ptrdiff_t>(k - 1), order.end(),
                   larger);
  std::vector<float> mine(2 * k);
  for (std::size_t i = 0; i < k; ++i) {
    mine[2 * i] = std::bit_cast<float>(order[i]);
    mine[2 * i + 1] = grad[order[i]];
  }
  // Everything stays in the residual but what was sent.
  std::copy(grad.begin(), grad.end(), state.residual.begin());
  for (std::size_t i = 0; i < k; ++i) state.residual[order[i]] = 0.0f;
  const auto ranks = static_cast<std::size_t>(group.ranks());
  std::vector<float> all(ranks * 2 * k);
  group.all_gather(mine, all);
  std::fill(grad.begin(), grad.end(), 0.0f);
  for (std::size_t i = 0; i < ranks * k; ++i)
    grad[std::bit_cast<std::uint32_t>(all[2 * i])] += all[2 * i + 1];
  const float inv = 1.0f / static_cast<float>(ranks);
  for (float& g : grad) g *= inv;
  return 4.0 * static_cast<double>(all.size());
}

}  // namespace parashift::core
