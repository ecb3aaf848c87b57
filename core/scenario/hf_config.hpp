// Imports a Hugging Face `config.json` as a ModelSpec: Llama-style keys
// (num_hidden_layers, hidden_size, num_attention_heads, num_key_value_heads,
// intermediate_size, vocab_size, hidden_act, tie_word_embeddings) and
// GPT-2-style keys (n_layer, n_embd, n_head, n_inner, vocab_size,
// activation_function).
#pragma once

#include <filesystem>
#include <string>

#include "core/model_spec.hpp"

namespace parashift::core {

/// Throws InputError naming the file and the missing or bad key.
ModelSpec load_hf_config(const std::filesystem::path& file);
/// Same, from JSON text; `file` names the source in messages.
ModelSpec parse_hf_config(const std::string& json_text, const std::string& file);

}  // namespace parashift::core
