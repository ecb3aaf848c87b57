// A small real task for the executor: character-level language modelling
// on a text (`training.text`). The vocabulary is the text's distinct bytes.
// Each character enters as a fixed random embedding (vocab x hidden, rows
// of unit expected norm, a pure function of the seed like every synthetic
// value) and the last layer's output y is read out through the same
// matrix: logits = y E^T, loss = the mean cross-entropy (nats per
// character) of the next character. The embedding is frozen, so the
// transformer layers are all that train, and their gradients are what the
// data-parallel sync (and its compressors) carry, as on the synthetic task.
// Each iteration reads new windows: sequence b of global micro-batch m in
// iteration i starts at a position that is a function of (seed, i, m, b),
// so a run, a restore that redoes an iteration and every plan read the same
// characters.
#pragma once

#include <cstdint>
#include <filesystem>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "hw/model/layer.hpp"
#include "hw/model/synthetic_data.hpp"

namespace parashift::hw {

class TextTask {
 public:
  /// `text` must hold at least 2 distinct bytes and more than `seq_len`
  /// characters; `where` names the source in the InputError otherwise.
  TextTask(std::string text, int seq_len, const std::string& where);
  /// Reads `path` (InputError naming `where` and the path when it cannot).
  static std::shared_ptr<const TextTask> load(const std::filesystem::path& path, int seq_len,
                                              const std::string& where);

  int vocab() const { return static_cast<int>(alphabet_.size()); }
  std::size_t chars() const { return ids_.size(); }
  const std::string& alphabet() const { return alphabet_; }

  /// The frozen embedding, vocab x hidden: row v, column h is
  /// sqrt(3 / hidden) x synthetic_uniform(seed, kEmbedding, v, h, 0).
  Matrix embedding(int hidden, std::uint64_t seed) const;
  /// Where sequence `sequence` of global micro-batch `micro_batch` starts
  /// in iteration `iteration`, in [0, chars() - seq_len - 1].
  std::size_t window_start(std::uint64_t seed, std::int64_t iteration, int micro_batch,
                           int sequence, int seq_len) const;
  /// The micro-batch's input (shape.tokens() x hidden: each character's
  /// embedding row) and its targets (the next character of each position).
  Matrix input(const LayerShape& shape, const Matrix& embedding, std::uint64_t seed,
               std::int64_t iteration, int micro_batch) const;
  std::vector<int> targets(const LayerShape& shape, std::uint64_t seed, std::int64_t iteration,
                           int micro_batch) const;

 private:
  std::string alphabet_;  // sorted distinct bytes
  std::vector<int> ids_;  // the text as indices into alphabet_
};

/// Cross-entropy of y's rows (read out through `embedding`) against
/// `targets` (one per row), summed and divided by `denominator` (the
/// iteration's tokens), and its gradient with respect to y:
/// dy = (softmax(y E^T) - onehot) E / denominator.
LossTerm cross_entropy_loss(const Matrix& y, const Matrix& embedding, std::span<const int> targets,
                            double denominator);

}  // namespace parashift::hw
