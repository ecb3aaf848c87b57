#include "core/model_spec.hpp"

#include "core/input_error.hpp"

namespace parashift::core {

double ModelSpec::layer_params() const {
  const double h = hidden;
  const double kv_dim = static_cast<double>(kv_heads) * head_dim();
  // Q and O are h x h; K and V are h x kv_dim each.
  const double attention_params = 2.0 * h * h + 2.0 * h * kv_dim;
  // GELU / squared-ReLU MLPs have two matrices, SwiGLU three (gate, up, down).
  const double mlp_matrices = ffn_kind == FfnKind::SwiGlu ? 3.0 : 2.0;
  const double mlp = mlp_matrices * h * ffn_hidden;
  const double norms = 2.0 * h;
  return attention_params + mlp + norms;
}

double ModelSpec::embedding_params() const {
  const double table = static_cast<double>(vocab) * hidden;
  return tied_embeddings ? table : 2.0 * table;
}

double ModelSpec::total_params() const {
  return layers * layer_params() + embedding_params() + hidden /* final norm */;
}

void ModelSpec::validate() const {
  auto positive = [](const char* field, int value) {
    if (value <= 0) {
      throw InputError(std::string("model.") + field + ": expected a positive integer, found " +
                       std::to_string(value));
    }
  };
  positive("layers", layers);
  positive("hidden", hidden);
  positive("heads", heads);
  positive("kv_heads", kv_heads);
  positive("ffn_hidden", ffn_hidden);
  positive("vocab", vocab);
  if (hidden % heads != 0) {
    throw InputError("model.heads: heads=" + std::to_string(heads) +
                     " does not divide hidden=" + std::to_string(hidden));
  }
  if (heads % kv_heads != 0) {
    throw InputError("model.kv_heads: kv_heads=" + std::to_string(kv_heads) +
                     " does not divide heads=" + std::to_string(heads));
  }
}

const char* to_string(FfnKind kind) {
  switch (kind) {
    case FfnKind::Gelu:
      return "gelu";
    case FfnKind::SwiGlu:
      return "swiglu";
    case FfnKind::SquaredRelu:
      return "squared_relu";
  }
  return "?";
}

FfnKind parse_ffn_kind(const std::string& text) {
  if (text == "gelu") return FfnKind::Gelu;
  if (text == "swiglu") return FfnKind::SwiGlu;
  if (text == "squared_relu") return FfnKind::SquaredRelu;
  throw InputError("expected one of gelu, swiglu, squared_relu, found '" + text + "'");
}

const char* to_string(AttentionKernel kind) {
  return kind == AttentionKernel::Fused ? "fused" : "unfused";
}

AttentionKernel parse_attention_kernel(const std::string& text) {
  if (text == "fused") return AttentionKernel::Fused;
  if (text == "unfused") return AttentionKernel::Unfused;
  throw InputError("expected one of fused, unfused, found '" + text + "'");
}

}  // namespace parashift::core
