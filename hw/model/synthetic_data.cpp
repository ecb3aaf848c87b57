#include "hw/model/synthetic_data.hpp"

#include "hw/model/synthetic_values.hpp"

namespace parashift::hw {

namespace {

constexpr std::uint64_t kInputId = 1'000'001;
constexpr std::uint64_t kTargetId = 1'000'002;

Matrix sample_matrix(const LayerShape& s, std::uint64_t seed, int micro_batch, std::uint64_t what,
                     float scale) {
  Matrix m(s.tokens(), s.hidden);
  for (int b = 0; b < s.sequences; ++b) {
    const auto sample =
        static_cast<std::uint64_t>(micro_batch) * static_cast<std::uint64_t>(s.sequences) +
        static_cast<std::uint64_t>(b);
    for (int p = 0; p < s.seq_len; ++p)
      for (int h = 0; h < s.hidden; ++h)
        m(b * s.seq_len + p, h) =
            scale * synthetic_uniform(seed, what, sample, static_cast<std::uint64_t>(p),
                                      static_cast<std::uint64_t>(h));
  }
  return m;
}

}  // namespace

Matrix micro_batch_input(const LayerShape& shape, std::uint64_t seed, int micro_batch) {
  return sample_matrix(shape, seed, micro_batch, kInputId, 1.0f);
}

Matrix micro_batch_target(const LayerShape& shape, std::uint64_t seed, int micro_batch) {
  return sample_matrix(shape, seed, micro_batch, kTargetId, 0.5f);
}

LossTerm squared_error_loss(const Matrix& y, const Matrix& target, int micro_batches) {
  const Matrix diff = y - target;
  const double denominator = static_cast<double>(y.size()) * micro_batches;
  LossTerm out;
  out.loss = diff.cast<double>().squaredNorm() / denominator;
  out.dy = diff * static_cast<float>(2.0 / denominator);
  return out;
}

}  // namespace parashift::hw
