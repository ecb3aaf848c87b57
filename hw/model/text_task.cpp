#include "hw/model/text_task.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

#include "core/input_error.hpp"
#include "hw/model/synthetic_values.hpp"

namespace parashift::hw {

namespace {

constexpr std::uint64_t kEmbeddingId = 1'000'101;
constexpr std::uint64_t kWindowId = 1'000'102;

}  // namespace

TextTask::TextTask(std::string text, int seq_len, const std::string& where) {
  if (seq_len < 1) throw core::InputError(where + ": sequences need at least 1 token");
  if (text.size() <= static_cast<std::size_t>(seq_len))
    throw core::InputError(where + ": the text has " + std::to_string(text.size()) +
                           " characters; a sequence of " + std::to_string(seq_len) +
                           " tokens needs at least " + std::to_string(seq_len + 1));
  std::string sorted = text;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  if (sorted.size() < 2)
    throw core::InputError(where + ": the text has " + std::to_string(sorted.size()) +
                           " distinct character(s); a language model needs at least 2");
  alphabet_ = std::move(sorted);
  ids_.reserve(text.size());
  for (const char c : text)
    ids_.push_back(static_cast<int>(std::lower_bound(alphabet_.begin(), alphabet_.end(), c) -
                                    alphabet_.begin()));
}

std::shared_ptr<const TextTask> TextTask::load(const std::filesystem::path& path, int seq_len,
                                               const std::string& where) {
  std::ifstream in(path, std::ios::binary);
  if (!in || std::filesystem::is_directory(path))
    throw core::InputError(where + ": cannot read the text file '" + path.string() +
                           "' (expected a readable text file)");
  std::ostringstream text;
  text << in.rdbuf();
  return std::make_shared<const TextTask>(text.str(), seq_len,
                                          where + " ('" + path.string() + "')");
}

Matrix TextTask::embedding(int hidden, std::uint64_t seed) const {
  // Uniform in [-a, a) has variance a^2 / 3: a = sqrt(3 / hidden) gives each
  // row an expected squared norm of 1.
  const auto scale = static_cast<float>(std::sqrt(3.0 / hidden));
  Matrix e(vocab(), hidden);
  for (int v = 0; v < vocab(); ++v)
    for (int h = 0; h < hidden; ++h)
      e(v, h) = scale * synthetic_uniform(seed, kEmbeddingId, static_cast<std::uint64_t>(v),
                                          static_cast<std::uint64_t>(h), 0);
  return e;
}

std::size_t TextTask::window_start(std::uint64_t seed, std::int64_t iteration, int micro_batch,
                                   int sequence, int seq_len) const {
  // synthetic_uniform in [-1, 1) mapped onto the starts that leave a target
  // for the window's last character.
  const std::size_t starts = ids_.size() - static_cast<std::size_t>(seq_len);
  const double u =
      0.5 * (1.0 + synthetic_uniform(seed, kWindowId, static_cast<std::uint64_t>(iteration),
                                     static_cast<std::uint64_t>(micro_batch),
                                     static_cast<std::uint64_t>(sequence)));
  return std::min(starts - 1, static_cast<std::size_t>(u * static_cast<double>(starts)));
}

Matrix TextTask::input(const LayerShape& shape, const Matrix& embedding, std::uint64_t seed,
                       std::int64_t iteration, int micro_batch) const {
  Matrix x(shape.tokens(), shape.hidden);
  for (int b = 0; b < shape.sequences; ++b) {
    const std::size_t start = window_start(seed, iteration, micro_batch, b, shape.seq_len);
    for (int p = 0; p < shape.seq_len; ++p)
      x.row(b * shape.seq_len + p) = embedding.row(ids_[start + static_cast<std::size_t>(p)]);
  }
  return x;
}

std::vector<int> TextTask::targets(const LayerShape& shape, std::uint64_t seed,
                                   std::int64_t iteration, int micro_batch) const {
  std::vector<int> out;
  out.reserve(static_cast<std::size_t>(shape.tokens()));
  for (int b = 0; b < shape.sequences; ++b) {
    const std::size_t start = window_start(seed, iteration, micro_batch, b, shape.seq_len);
    for (int p = 0; p < shape.seq_len; ++p)
      out.push_back(ids_[start + static_cast<std::size_t>(p) + 1]);
  }
  return out;
}

LossTerm cross_entropy_loss(const Matrix& y, const Matrix& embedding, std::span<const int> targets,
                            double denominator) {
  Matrix logits = y * embedding.transpose();  // rows x vocab
  LossTerm out;
  for (Eigen::Index r = 0; r < logits.rows(); ++r) {
    auto row = logits.row(r);
    const int t = targets[static_cast<std::size_t>(r)];
    const float top = row.maxCoeff();
    const double shifted_t = static_cast<double>(row(t)) - top;
    row.array() = (row.array() - top).exp();
    const double sum = row.cast<double>().sum();
    // -log softmax_t = log(sum over v of exp(logit_v - top)) - (logit_t - top).
    out.loss += std::log(sum) - shifted_t;
    row /= static_cast<float>(sum);
    row(t) -= 1.0f;
  }
  out.loss /= denominator;
  logits /= static_cast<float>(denominator);
  out.dy = logits * embedding;
  return out;
}

}  // namespace parashift::hw
