#include "core/compress/gradient_compressor.hpp"

#include <cmath>

#include "core/assert.hpp"
#include "topologies/mix64.hpp"

namespace parashift::core {
namespace {

double unit(std::uint64_t bits) {
  return (static_cast<double>(bits >> 11) + 0.5) / 9007199254740992.0;  // (0, 1)
}

// A standard normal draw per index (Box-Muller on topo::mix64, the same
// stream on every rank and machine).
float normal(std::uint64_t seed, std::uint64_t index) {
  const double u1 = unit(topo::mix64(seed ^ topo::mix64(2 * index)));
  const double u2 = unit(topo::mix64(seed ^ topo::mix64(2 * index + 1)));
  return static_cast<float>(std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2));
}

}  // namespace

GradientCompressor::GradientCompressor(CompressionSpec spec, std::uint64_t seed)
    : spec_(spec), seed_(seed) {}

CompressorState GradientCompressor::state(int tensor) const {
  const auto it = states_.find(tensor);
  return it == states_.end() ? CompressorState{} : it->second;
}

void GradientCompressor::set_state(int tensor, CompressorState state) {
  if (state.residual.empty() && state.q.empty() && state.shard_residual.empty() &&
      state.pending.empty())
    states_.erase(tensor);
  else
    states_[tensor] = std::move(state);
}

double GradientCompressor::average(int tensor, std::span<float> grad, int rows, int cols,
                                   ReduceGroup& group) {
  PARASHIFT_ASSERT(grad.size() == static_cast<std::size_t>(rows) * static_cast<std::size_t>(cols));
  if (!spec_.enabled()) {
    group.sum(grad);
    const float inv = 1.0f / static_cast<float>(group.ranks());
    for (float& g : grad) g *= inv;
    return 4.0 * static_cast<double>(grad.size());
  }
  CompressorState& state = states_[tensor];
  if (state.residual.size() != grad.size()) state.residual.assign(grad.size(), 0.0f);
  for (std::size_t i = 0; i < grad.size(); ++i) grad[i] += state.residual[i];
  switch (spec_.kind) {
    case CompressorKind::PowerSgd: {
      const std::size_t q_size = static_cast<std::size_t>(cols) * spec_.rank;
      if (state.q.size() != q_size) {
        state.q.resize(q_size);
        const std::uint64_t stream =
            topo::mix64(seed_ ^ topo::mix64(static_cast<std::uint64_t>(tensor)));
        for (std::size_t i = 0; i < q_size; ++i) state.q[i] = normal(stream, i);
      }
      return powersgd_average(grad, rows, cols, spec_.rank, state, group);
    }
    case CompressorKind::TopK:
      return topk_average(grad, spec_.density, state, group);
    case CompressorKind::Int8:
      return int8_average(grad, spec_.block, state, group);
    case CompressorKind::None:
      break;
  }
  return 0.0;
}

}  // namespace parashift::core
