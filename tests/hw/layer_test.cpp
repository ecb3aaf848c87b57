#include <doctest/doctest.h>

#include "hw/model/layer.hpp"
#include "hw/model/optimizer.hpp"
#include "hw/model/synthetic_data.hpp"

using namespace parashift;
using hw::Matrix;

namespace {

hw::LayerShape tiny_shape() {
  // 2 heads of 4 dims, MLP 16 wide, 2 sequences of 5 tokens: 10 x 8 activations.
  return {8, 2, 16, 1, 5, 2};
}

const hw::TpReduce kNoReduce = [](Matrix&) {};

double loss_of(const hw::LayerTensors& w, const hw::LayerShape& s, const Matrix& x,
               const Matrix& target) {
  hw::LayerStash stash;
  const Matrix y = hw::layer_forward(w, s, x, stash, kNoReduce);
  return hw::squared_error_loss(y, target, 1).loss;
}

}  // namespace

TEST_CASE("layer backward matches central finite differences of the loss") {
  const auto s = tiny_shape();
  hw::LayerTensors w = hw::init_layer(s, 7, 0, 0);
  Matrix x = hw::micro_batch_input(s, 7, 0);
  const Matrix target = hw::micro_batch_target(s, 7, 0);
  hw::LayerStash stash;
  const Matrix y = hw::layer_forward(w, s, x, stash, kNoReduce);
  const auto term = hw::squared_error_loss(y, target, 1);
  hw::LayerTensors grads = hw::zero_layer(s);
  const Matrix dx = hw::layer_backward(w, s, stash, term.dy, grads, kNoReduce);

  // d loss / d p ~ (L(p + e) - L(p - e)) / 2e; fp32 with e = 1e-2 keeps the
  // truncation error O(e^2) and rounding near 1e-7 / e, so 2% relative
  // (plus 1e-5 absolute for near-zero derivatives) is a real check.
  const float e = 1e-2f;
  auto numeric = [&](float& p, const auto& loss) {
    const float keep = p;
    p = keep + e;
    const double up = loss();
    p = keep - e;
    const double down = loss();
    p = keep;
    return (up - down) / (2.0 * e);
  };
  auto loss = [&] { return loss_of(w, s, x, target); };
  auto all_w = w.all();
  auto all_g = grads.all();
  for (std::size_t t = 0; t < all_w.size(); ++t) {
    for (const auto& [r, c] : {std::pair{0, 0}, std::pair{3, 5}, std::pair{7, 2}}) {
      CAPTURE(t);
      CAPTURE(r);
      CAPTURE(c);
      const double expected = numeric((*all_w[t])(r, c), loss);
      CHECK((*all_g[t])(r, c) == doctest::Approx(expected).epsilon(0.02).scale(1e-3 / 0.02));
    }
  }
  for (const auto& [r, c] : {std::pair{0, 1}, std::pair{4, 4}, std::pair{9, 7}}) {
    const double expected = numeric(x(r, c), loss);
    CHECK(dx(r, c) == doctest::Approx(expected).epsilon(0.02).scale(1e-3 / 0.02));
  }
}

TEST_CASE("attention is causal: the first token's output ignores later tokens") {
  const auto s = tiny_shape();
  const hw::LayerTensors w = hw::init_layer(s, 3, 1, 0);
  Matrix x = hw::micro_batch_input(s, 3, 0);
  hw::LayerStash stash;
  const Matrix before = hw::layer_forward(w, s, x, stash, kNoReduce);
  x.row(4).setConstant(5.0f);  // last token of the first sequence
  const Matrix after = hw::layer_forward(w, s, x, stash, kNoReduce);
  CHECK((before.row(0) - after.row(0)).norm() == 0.0f);
  CHECK((before.row(5) - after.row(5)).norm() == 0.0f);  // the second sequence too
  CHECK((before.row(4) - after.row(4)).norm() > 0.0f);
}

TEST_CASE("a tensor-parallel shard is a slice of the one global weight tensor") {
  auto s1 = tiny_shape();
  auto s2 = s1;
  s2.tp = 2;
  const auto whole = hw::init_layer(s1, 11, 2, 0);
  const auto shard1 = hw::init_layer(s2, 11, 2, 1);
  // QKV columns of rank 1: heads 1 of Q, K, V = global columns 4..7, 12..15, 20..23.
  CHECK(shard1.wqkv.block(0, 0, 8, 4) == whole.wqkv.block(0, 4, 8, 4));
  CHECK(shard1.wqkv.block(0, 4, 8, 4) == whole.wqkv.block(0, 12, 8, 4));
  CHECK(shard1.wqkv.block(0, 8, 8, 4) == whole.wqkv.block(0, 20, 8, 4));
  CHECK(shard1.wo == whole.wo.block(4, 0, 4, 8));
  CHECK(shard1.w1 == whole.w1.block(0, 8, 8, 8));
  CHECK(shard1.w2 == whole.w2.block(8, 0, 8, 8));
}

TEST_CASE("layer_parameters counts what zero_layer makes") {
  // hidden 32, heads 4, ffn 64: tp 1 is 32 x (4 x 32 + 2 x 64) = 8192;
  // tp 2 halves every shard: 32 x (4 x 16 + 2 x 32) = 4096.
  for (const int tp : {1, 2}) {
    const hw::LayerShape s{32, 4, 64, tp, 8, 1};
    CAPTURE(tp);
    CHECK(hw::layer_parameters(s) == hw::zero_layer(s).elements());
    CHECK(hw::layer_parameters(s) == std::size_t{8192} / static_cast<std::size_t>(tp));
  }
}

TEST_CASE("the default learning rate: Adam's scales as 1/width above hidden 1024, SGD's does not") {
  // Up to hidden 1,024 both are 1e-3; above it Adam's is 1e-3 x 1,024 / hidden:
  // 2,048 -> 5e-4, 5,120 -> 2e-4 (the H200 check's model), 8,192 -> 1.25e-4.
  CHECK(hw::default_learning_rate(hw::OptimizerKind::Adam, 64) == doctest::Approx(1e-3));
  CHECK(hw::default_learning_rate(hw::OptimizerKind::Adam, 1024) == doctest::Approx(1e-3));
  CHECK(hw::default_learning_rate(hw::OptimizerKind::Adam, 2048) == doctest::Approx(5e-4));
  CHECK(hw::default_learning_rate(hw::OptimizerKind::Adam, 5120) == doctest::Approx(2e-4));
  CHECK(hw::default_learning_rate(hw::OptimizerKind::Adam, 8192) == doctest::Approx(1.25e-4));
  CHECK(hw::default_learning_rate(hw::OptimizerKind::Sgd, 8192) == doctest::Approx(1e-3));
}
