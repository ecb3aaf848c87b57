#include <doctest/doctest.h>

#include "core/input_error.hpp"
#include "core/scenario/hf_config.hpp"
#include "core/scenario/scenario.hpp"

using namespace parashift::core;

TEST_CASE("a Llama-3 config.json becomes the Llama-3 8B preset's shape") {
  const ModelSpec m =
      load_hf_config(std::string(PARASHIFT_SOURCE_DIR) + "/tests/core/data/llama3-8b-config.json");
  CHECK(m.name == "meta-llama/Meta-Llama-3-8B");
  CHECK(m.layers == 32);
  CHECK(m.hidden == 4096);
  CHECK(m.heads == 32);
  CHECK(m.kv_heads == 8);
  CHECK(m.ffn_hidden == 14336);
  CHECK(m.ffn_kind == FfnKind::SwiGlu);  // hidden_act silu: gated MLP
  CHECK(m.vocab == 128256);
  CHECK_FALSE(m.tied_embeddings);
  // Same numbers as scenarios/models/llama3-8b.yaml: 8.03B parameters.
  const ModelSpec preset = load_model_preset("llama3-8b", "/nonexistent");
  CHECK(m.total_params() == doctest::Approx(preset.total_params()));
}

TEST_CASE("a GPT-2 config uses n_* keys and 4h when n_inner is null") {
  const ModelSpec m = parse_hf_config(
      R"({"n_layer": 12, "n_embd": 768, "n_head": 12, "n_inner": null, "vocab_size": 50257,
          "activation_function": "gelu_new", "model_type": "gpt2"})",
      "gpt2.json");
  CHECK(m.layers == 12);
  CHECK(m.ffn_hidden == 4 * 768);
  CHECK(m.ffn_kind == FfnKind::Gelu);
  CHECK(m.tied_embeddings);  // GPT-2 ties by default
  CHECK(m.name == "gpt2");
}

TEST_CASE("a config.json missing a key or with a bad value is named precisely") {
  CHECK_THROWS_WITH_AS(
      parse_hf_config(R"({"num_hidden_layers": 32, "num_attention_heads": 32,
                          "intermediate_size": 11008, "vocab_size": 32000})",
                      "cfg.json"),
      "cfg.json: missing key 'hidden_size' (expected in a Llama-style config.json)", InputError);
  CHECK_THROWS_WITH_AS(
      parse_hf_config(R"({"n_layer": 12, "n_embd": "768", "n_head": 12, "vocab_size": 1})",
                      "gpt.json"),
      "gpt.json: key 'n_embd': expected a positive integer, found \"768\"", InputError);
  CHECK_THROWS_WITH_AS(parse_hf_config("{not json", "x.json"),
                       doctest::Contains("x.json: malformed JSON"), InputError);
  CHECK_THROWS_WITH_AS(load_hf_config("/nonexistent/config.json"),
                       "/nonexistent/config.json: cannot open config.json", InputError);
}

TEST_CASE("a scenario can take its model from a config.json") {
  const std::string dir = std::string(PARASHIFT_SOURCE_DIR) + "/tests/core/";
  const Scenario s = parse_scenario(R"(
model: {hf_config: data/llama3-8b-config.json, layers: 16}
cluster:
  device: h100-sxm-80gb
  topology: {generator: dgx-h100}
training: {global_batch: 8, seq_len: 8192}
plan: {tp: 8}
)",
                                    dir + "scenario.yaml");
  CHECK(s.model.kv_heads == 8);
  CHECK(s.model.layers == 16);  // the scenario overrides the config
}

TEST_CASE("a mixture-of-experts config.json (Mixtral) is refused, not imported as dense") {
  // Mixtral-8x7B's keys: a Llama-style dense shape plus num_local_experts.
  const char* mixtral = R"({"architectures": ["MixtralForCausalLM"], "model_type": "mixtral",
      "num_hidden_layers": 32, "hidden_size": 4096, "num_attention_heads": 32,
      "num_key_value_heads": 8, "intermediate_size": 14336, "vocab_size": 32000,
      "hidden_act": "silu", "num_local_experts": 8, "num_experts_per_tok": 2})";
  CHECK_THROWS_WITH_AS(parse_hf_config(mixtral, "mixtral.json"),
                       doctest::Contains("mixtral.json: key 'num_local_experts' = 8: "
                                         "mixture-of-experts models are not modelled yet"),
                       InputError);
  // A dense config with a null or single expert count is still read.
  const ModelSpec dense = parse_hf_config(
      R"({"num_hidden_layers": 2, "hidden_size": 256, "num_attention_heads": 4,
          "intermediate_size": 1024, "vocab_size": 1000, "num_experts": null})",
      "dense.json");
  CHECK(dense.layers == 2);
}
