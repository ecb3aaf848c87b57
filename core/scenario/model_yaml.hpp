// Reads a ModelSpec from a YAML map (inline in a scenario or a preset file).
#pragma once

#include "core/model_spec.hpp"
#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

/// Reads name, layers, hidden, heads, kv_heads, ffn_hidden, ffn_kind, vocab,
/// tied_embeddings from `fields`, starting from `base` (a preset) so a
/// scenario may override single fields. Leaves unknown-field checking to the caller.
ModelSpec read_model_fields(YamlFields& fields, ModelSpec base);

}  // namespace parashift::core
