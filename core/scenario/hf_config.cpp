#include "core/scenario/hf_config.hpp"

#include <fstream>
#include <limits>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/input_error.hpp"
#include "core/input_file.hpp"

namespace parashift::core {

namespace {

using nlohmann::json;

class ConfigReader {
 public:
  ConfigReader(const json& doc, std::string file, const char* style)
      : doc_(doc), file_(std::move(file)), style_(style) {}

  bool has(const char* key) const { return doc_.contains(key) && !doc_[key].is_null(); }

  int positive_int(const char* key) const {
    if (!has(key)) {
      throw InputError(file_ + ": missing key '" + key + "' (expected in a " + style_ +
                       " config.json)");
    }
    const json& v = doc_[key];
    if (!v.is_number_integer() || v.get<long long>() < 1 ||
        v.get<long long>() > std::numeric_limits<int>::max()) {
      throw InputError(file_ + ": key '" + key + "': expected a positive integer, found " +
                       v.dump());
    }
    return v.get<int>();
  }

  std::string string(const char* key, const std::string& fallback) const {
    if (!has(key)) return fallback;
    if (!doc_[key].is_string()) {
      throw InputError(file_ + ": key '" + key + "': expected a string, found " + doc_[key].dump());
    }
    return doc_[key].get<std::string>();
  }

  bool boolean(const char* key, bool fallback) const {
    if (!has(key)) return fallback;
    if (!doc_[key].is_boolean()) {
      throw InputError(file_ + ": key '" + key + "': expected true or false, found " +
                       doc_[key].dump());
    }
    return doc_[key].get<bool>();
  }

  FfnKind activation(const char* key, const std::string& fallback) const {
    const std::string act = string(key, fallback);
    // Gated MLPs (Llama, Mistral, Qwen) name their SiLU gate; Nemotron uses relu2.
    if (act == "silu" || act == "swish") return FfnKind::SwiGlu;
    if (act.rfind("gelu", 0) == 0) return FfnKind::Gelu;
    if (act == "relu2") return FfnKind::SquaredRelu;
    throw InputError(file_ + ": key '" + key + "': unsupported activation \"" + act +
                     "\" (expected silu, swish, gelu*, relu2)");
  }

 private:
  const json& doc_;
  std::string file_;
  const char* style_;
};

// Mixture-of-experts configs (Mixtral, Qwen-MoE, DeepSeek, DBRX-style keys):
// the cost model has dense layers only, so importing one as dense would
// quietly model another network.
void refuse_moe(const json& doc, const std::string& file) {
  for (const char* key :
       {"num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts"}) {
    if (!doc.contains(key)) continue;
    const json& v = doc[key];
    if (v.is_number() && v.get<double>() > 1) {
      throw InputError(file + ": key '" + key + "' = " + v.dump() +
                       ": mixture-of-experts models are not modelled yet (dense transformers "
                       "only); importing it as a dense model would give wrong FLOPs and memory");
    }
  }
}

}  // namespace

ModelSpec parse_hf_config(const std::string& json_text, const std::string& file) {
  json doc;
  try {
    doc = json::parse(json_text);
  } catch (const json::exception& e) {  // parse_error, and out_of_range for 1e99999
    throw InputError(file + ": malformed JSON (" + std::string(e.what()) + ")");
  }
  if (!doc.is_object()) throw InputError(file + ": expected a JSON object");
  refuse_moe(doc, file);
  ModelSpec m;
  if (doc.contains("n_layer") || doc.contains("n_embd")) {
    const ConfigReader r(doc, file, "GPT-style");
    m.layers = r.positive_int("n_layer");
    m.hidden = r.positive_int("n_embd");
    m.heads = r.positive_int("n_head");
    m.kv_heads = m.heads;
    // GPT-2 writes n_inner: null for the default 4 * n_embd.
    m.ffn_hidden = r.has("n_inner") ? r.positive_int("n_inner") : 4 * m.hidden;
    m.vocab = r.positive_int("vocab_size");
    m.ffn_kind = r.activation("activation_function", "gelu_new");
    m.tied_embeddings = r.boolean("tie_word_embeddings", true);
    m.name = r.string("_name_or_path", r.string("model_type", "gpt"));
  } else {
    const ConfigReader r(doc, file, "Llama-style");
    m.layers = r.positive_int("num_hidden_layers");
    m.hidden = r.positive_int("hidden_size");
    m.heads = r.positive_int("num_attention_heads");
    m.kv_heads = r.has("num_key_value_heads") ? r.positive_int("num_key_value_heads") : m.heads;
    m.ffn_hidden = r.positive_int("intermediate_size");
    m.vocab = r.positive_int("vocab_size");
    m.ffn_kind = r.activation("hidden_act", "silu");
    m.tied_embeddings = r.boolean("tie_word_embeddings", false);
    m.name = r.string("_name_or_path", r.string("model_type", "llama"));
  }
  try {
    m.validate();
  } catch (const InputError& e) {
    throw InputError(file + ": " + e.what());
  }
  return m;
}

ModelSpec load_hf_config(const std::filesystem::path& file) {
  return parse_hf_config(read_input_file(file, "config.json"), file.string());
}

}  // namespace parashift::core
