// A decoder-only transformer's shape.
#pragma once

#include <string>

namespace parashift::core {

enum class FfnKind { Gelu, SwiGlu, SquaredRelu };

/// The attention kernel a run uses. Fused (FlashAttention, the default of
/// Megatron-Core, NeMo, torchtitan): the s x s scores never reach HBM and
/// causal masking skips half the work. Unfused: batched GEMMs over the full
/// scores, softmax and dropout through HBM, the scores kept for backward.
enum class AttentionKernel { Fused, Unfused };

struct ModelSpec {
  std::string name;
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;    // == heads without grouped-query attention
  int ffn_hidden = 0;  // intermediate size of the MLP
  FfnKind ffn_kind = FfnKind::Gelu;
  int vocab = 0;
  bool tied_embeddings = true;
  AttentionKernel attention = AttentionKernel::Fused;

  int head_dim() const { return hidden / heads; }
  /// Weights of one transformer layer (attention + MLP + 2 norms), count.
  double layer_params() const;
  /// Input embedding (+ untied output head), count.
  double embedding_params() const;
  double total_params() const;

  /// Throws InputError naming the first inconsistent field.
  void validate() const;
};

const char* to_string(FfnKind kind);
/// Accepts gelu, swiglu, squared_relu; throws InputError otherwise.
FfnKind parse_ffn_kind(const std::string& text);
const char* to_string(AttentionKernel kind);
/// Accepts fused, unfused; throws InputError otherwise.
AttentionKernel parse_attention_kernel(const std::string& text);

}  // namespace parashift::core
