// Int8 block quantisation and its averaging, as ZeRO++'s quantised gradient
// reduce-scatter (qgZ) sends it, plus error feedback on both quantisations:
//   pad (gradient + residual) to ranks x s elements (s a multiple of block);
//   quantise; residual = what quantising lost; all-to-all the shards;
//   each rank sums the W dequantised copies of its shard, divides by W, adds
//   its shard residual, re-quantises (shard residual = what that lost);
//   all-gather the quantised shards; dequantise.
// Four int8 codes share one float slot (bit for bit); each block's scale
// is max |x| / 127, codes round to nearest and stay in [-127, 127].
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "core/compress/gradient_compressor.hpp"

namespace parashift::core {

void int8_quantise(std::span<const float> x, int block, std::span<float> codes,
                   std::span<float> scales, std::span<float> back) {
  const auto b = static_cast<std::size_t>(block);
  for (std::size_t start = 0, blk = 0; start < x.size(); start += b, ++blk) {
    float peak = 0.0f;
    for (std::size_t i = start; i < start + b; ++i) peak = std::max(peak, std::fabs(x[i]));
    const float scale = peak / 127.0f;
    scales[blk] = scale;
    for (std::size_t i = start; i < start + b; i += 4) {
      std::int8_t four[4];
      for (std::size_t j = 0; j < 4; ++j) {
        const float q = scale > 0.0f ? std::round(x[i + j] / scale) : 0.0f;
        four[j] = static_cast<std::int8_t>(std::clamp(q, -127.0f, 127.0f));
        back[i + j] = static_cast<float>(four[j]) * scale;
      }
      float slot;
      std::memcpy(&slot, four, sizeof slot);
      codes[i / 4] = slot;
    }
  }
}

void int8_add_dequantised(std::span<const float> codes, std::span<const float> scales, int block,
                          std::span<float> out) {
  const auto b = static_cast<std::size_t>(block);
  for (std::size_t i = 0; i < out.size(); i += 4) {
    std::int8_t four[4];
    std::memcpy(four, &codes[i / 4], sizeof four);
    const float scale = scales[i / b];
    for (std::size_t j = 0; j < 4; ++j) out[i + j] += static_cast<float>(four[j]) * scale;
  }
}

double int8_average(std::span<float> grad, int block, CompressorState& state, ReduceGroup& group) {
  const auto ranks = static_cast<std::size_t>(group.ranks());
  const auto b = static_cast<std::size_t>(block);
  const std::size_t n = grad.size();
  const std::size_t shard = (n + ranks * b - 1) / (ranks * b) * b;  // elements per rank's shard
  const std::size_t padded = shard * ranks;
  const std::size_t shard_slots = shard / 4 + shard / b;  // codes, then scales
  std::vector<float> x(padded, 0.0f);
  std::copy(grad.begin(), grad.end(), x.begin());
  std::vector<float> back(padded);
  std::vector<float> send(ranks * shard_slots);
  for (std::size_t r = 0; r < ranks; ++r) {
    float* slots = send.data() + r * shard_slots;
    int8_quantise(std::span<const float>(x.data() + r * shard, shard), block,
                  std::span<float>(slots, shard / 4),
                  std::span<float>(slots + shard / 4, shard / b),
                  std::span<float>(back.data() + r * shard, shard));
  }
  for (std::size_t i = 0; i < n; ++i) state.residual[i] = x[i] - back[i];
  std::vector<float> recv(send.size());
  group.all_to_all(send, recv);
  // Sum this rank's shard from every rank, in rank order.
  std::vector<float> sum(shard, 0.0f);
  for (std::size_t r = 0; r < ranks; ++r) {
    const float* slots = recv.data() + r * shard_slots;
    int8_add_dequantised(std::span<const float>(slots, shard / 4),
                         std::span<const float>(slots + shard / 4, shard / b), block, sum);
  }
  if (state.shard_residual.size() != shard) state.shard_residual.assign(shard, 0.0f);
  const float inv = 1.0f / static_cast<float>(ranks);
  for (std::size_t i = 0; i < shard; ++i) sum[i] = sum[i] * inv + state.shard_residual[i];
  std::vector<float> mine(shard_slots);
  std::vector<float> mean_back(shard);
  int8_quantise(sum, block, std::span<float>(mine.data(), shard / 4),
                std::span<float>(mine.data() + shard / 4, shard / b), mean_back);
  for (std::size_t i = 0; i < shard; ++i) state.shard_residual[i] = sum[i] - mean_back[i];
  std::vector<float> all(ranks * shard_slots);
  group.all_gather(mine, all);
  std::fill(x.begin(), x.end(), 0.0f);
  for (std::size_t r = 0; r < ranks; ++r) {
    const float* slots = all.data() + r * shard_slots;
    int8_add_dequantised(std::span<const float>(slots, shard / 4),
                         std::span<const float>(slots + shard / 4, shard / b), block,
                         std::span<float>(x.data() + r * shard, shard));
  }
  std::copy(x.begin(), x.begin() + static_cast<std::ptrdiff_t>(n), grad.begin());
  return 4.0 * static_cast<double>(send.size() + all.size());
}

}  // namespace parashift::core
