#include "core/scenario/model_yaml.hpp"

#include "core/input_error.hpp"

namespace parashift::core {

ModelSpec read_model_fields(YamlFields& fields, ModelSpec base) {
  ModelSpec m = std::move(base);
  if (auto v = fields.optional_string("name")) m.name = *v;
  auto int_field = [&](const char* key, int& target) {
    if (auto v = fields.optional_positive_int(key)) target = *v;
  };
  int_field("layers", m.layers);
  int_field("hidden", m.hidden);
  int_field("heads", m.heads);
  int_field("kv_heads", m.kv_heads);
  int_field("ffn_hidden", m.ffn_hidden);
  int_field("vocab", m.vocab);
  if (auto v = fields.optional_string("ffn_kind")) {
    try {
      m.ffn_kind = parse_ffn_kind(*v);
    } catch (const InputError& e) {
      fields.fail("ffn_kind", e.what());
    }
  }
  if (auto v = fields.optional_bool("tied_embeddings")) m.tied_embeddings = *v;
  if (auto v = fields.optional_string("attention")) {
    try {
      m.attention = parse_attention_kernel(*v);
    } catch (const InputError& e) {
      fields.fail("attention", e.what());
    }
  }
  if (m.kv_heads == 0) m.kv_heads = m.heads;  // no GQA unless kv_heads is given
  return m;
}

}  // namespace parashift::core
