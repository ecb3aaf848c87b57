#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "core/model_spec.hpp"
#include "cost/test_models.hpp"

using namespace parashift::core;

namespace {
ModelSpec gpt3() {
  return test::gpt3_175b();
}
}  // namespace

TEST_CASE("GPT-3 175B parameter count") {
  const ModelSpec m = gpt3();
  // Per layer: attention 4h^2 + MLP 8h^2 + norms 2h = 12h^2 + 2h
  //   = 12 * 150,994,944 + 24,576 = 1,811,939,328 + 24,576 = 1,811,963,904.
  CHECK(m.layer_params() == doctest::Approx(1'811'963'904.0));
  // Total: 96 layers + tied embedding 51200 * 12288 + final norm 12288
  //   = 173,948,534,784 + 629,145,600 + 12,288 = 174,577,692,672 (the "175B").
  CHECK(m.total_params() == doctest::Approx(174'577'692'672.0));
}

TEST_CASE("GQA and SwiGLU change the layer's weights") {
  ModelSpec m;  // Llama-3 70B
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.ffn_kind = FfnKind::SwiGlu;
  m.vocab = 128256;
  m.tied_embeddings = false;
  // head_dim 128, kv_dim 1024: attention 2*8192^2 + 2*8192*1024 = 150,994,944;
  // MLP 3 * 8192 * 28672 = 704,643,072; norms 16,384 -> 855,654,400 per layer.
  CHECK(m.layer_params() == doctest::Approx(855'654'400.0));
  // 80 layers + untied 2 * 128256 * 8192 + 8192 = 68,452,352,000 + 2,101,346,304 + 8,192.
  CHECK(m.total_params() == doctest::Approx(70'553'706'496.0));
}

TEST_CASE("model validation names the field") {
  ModelSpec m = gpt3();
  m.heads = 100;  // 12288 / 100 is not whole
  CHECK_THROWS_WITH_AS(m.validate(), "model.heads: heads=100 does not divide hidden=12288",
                       InputError);
  m = gpt3();
  m.kv_heads = 7;
  CHECK_THROWS_WITH_AS(m.validate(), "model.kv_heads: kv_heads=7 does not divide heads=96",
                       InputError);
  m = gpt3();
  m.layers = 0;
  CHECK_THROWS_AS(m.validate(), InputError);
}

TEST_CASE("ffn kind names round-trip") {
  for (auto kind : {FfnKind::Gelu, FfnKind::SwiGlu, FfnKind::SquaredRelu}) {
    CHECK(parse_ffn_kind(to_string(kind)) == kind);
  }
  CHECK_THROWS_AS(parse_ffn_kind("relu6"), InputError);
}
