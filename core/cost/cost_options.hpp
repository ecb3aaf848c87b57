// Software choices that change a plan's cost but are not part of the plan:
// what "selective" recomputes, which communication overlaps. Defaults
// describe current Megatron-Core / NeMo. (The attention kernel is the
// model's: ModelSpec::attention, read by both the time and memory models.)
#pragma once

namespace parashift::core {

enum class SelectiveRecompute {
  AttentionCore,  // Megatron selective: recompute the attention core only
  PerOp,          // torchtitan op-level SAC: element-wise ops and every second GEMM
};

struct CostOptions {
  SelectiveRecompute selective = SelectiveRecompute::AttentionCore;
  /// Gradient reduce of the last micro-batch overlaps its backward pass in
  /// buckets (Megatron --overlap-grad-reduce, FSDP's reduce-scatter).
  bool overlap_grad_reduce = true;
  /// Distributed optimizer / FSDP parameter all-gather overlaps the next
  /// forward (Megatron --overlap-param-gather, FSDP prefetch).
  bool overlap_param_gather = true;
  /// Tensor-parallel collectives overlap the GEMMs they feed (Megatron
  /// --tp-comm-overlap, PyTorch AsyncTP); exposed only beyond the GEMM time.
  bool tp_comm_overlap = false;
  /// Share of the TP traffic such overlap hides: the decomposed GEMMs and
  /// the copies contend for SMs and HBM, so measured gains (PyTorch AsyncTP,
  /// Transformer Engine userbuffers) hide about half of it.
  double tp_overlap_share = 0.5;
  /// HBM traffic of element-wise work relative to fused kernels (Megatron,
  /// Transformer Engine, torch.compile: 1). Eager PyTorch runs each op as its
  /// own kernel: an RMSNorm is ~8 passes instead of 2, SwiGLU 3 instead of 1,
  /// about 3x the traffic overall.
  double elementwise_traffic = 1.0;
  /// Bytes of gradient reduced per parameter (2: BF16 reduce; 4: FP32).
  double grad_reduce_bytes = 2.0;
};

}  // namespace parashift::core
