#include <doctest/doctest.h>

#include "core/cost/compute_model.hpp"
#include "core/cost/work_profile.hpp"
#include "test_models.hpp"

using namespace parashift::core;
using parashift::core::test::gpt3_175b;
using parashift::core::test::llama3_70b;
using parashift::core::test::plan_175b;

TEST_CASE("TP collectives: two all-reduces each way without SP, RS+AG pairs with SP") {
  const ModelSpec m = gpt3_175b();
  ParallelPlan p = plan_175b();
  const DeviceSpec& d = device_preset("a100-80gb");
  // b*s*h*2 = 1 * 2048 * 12288 * 2 = 50'331'648 bytes per collective.
  WorkProfile w = work_profile(m, d, p, 2048);
  CHECK(w.layer.tp_forward.kind == CollectiveKind::AllReduce);
  CHECK(w.layer.tp_forward.count == 2);
  CHECK(w.layer.tp_forward.bytes == doctest::Approx(50'331'648.0));
  CHECK(w.layer.tp_backward.count == 2);
  CHECK(w.layer.tp_forward_scatter.count == 0);
  // Full recompute repeats the forward's two in the backward pass.
  p.recompute = Recompute::Full;
  w = work_profile(m, d, p, 2048);
  CHECK(w.layer.tp_backward.count == 4);
  // Sequence parallel: all-gather + reduce-scatter pairs of the same buffer.
  p.recompute = Recompute::None;
  p.sequence_parallel = true;
  w = work_profile(m, d, p, 2048);
  CHECK(w.layer.tp_forward.kind == CollectiveKind::AllGather);
  CHECK(w.layer.tp_forward.count == 2);
  CHECK(w.layer.tp_forward_scatter.kind == CollectiveKind::ReduceScatter);
  CHECK(w.layer.tp_forward_scatter.count == 2);
  CHECK(w.layer.tp_backward_scatter.count == 2);
  // No TP, no collectives.
  p.tp = 1;
  p.sequence_parallel = false;
  w = work_profile(m, d, p, 2048);
  CHECK(w.layer.tp_forward.count == 0);
  CHECK(w.layer.tp_backward.count == 0);
}

TEST_CASE("CP ring exchange carries the GQA K,V chunk") {
  const ModelSpec m = llama3_70b();
  ParallelPlan p;
  p.tp = 4;
  p.cp = 2;
  p.dp = 1;
  p.global_batch = 1;
  // Each rank holds s/c = 4096 tokens and 8/4 = 2 KV heads of 128:
  // K and V: 2 * 4096 * 2 * 128 * 2 B = 4'194'304 B, sent c-1 = 1 time.
  const WorkProfile w = work_profile(m, device_preset("h100-sxm-80gb"), p, 8192);
  CHECK(w.layer.cp_forward.kind == CollectiveKind::SendRecv);
  CHECK(w.layer.cp_forward.count == 1);
  CHECK(w.layer.cp_forward.bytes == doctest::Approx(4'194'304.0));
  // Backward passes K, V and dK, dV.
  CHECK(w.layer.cp_backward.bytes == doctest::Approx(8'388'608.0));
}

TEST_CASE("recompute modes cost none < selective < full == forward") {
  const ModelSpec m = gpt3_175b();
  ParallelPlan p = plan_175b();
  const DeviceSpec& d = device_preset("h100-sxm-80gb");
  p.recompute = Recompute::None;
  const WorkProfile none = work_profile(m, d, p, 2048);
  p.recompute = Recompute::Selective;
  const WorkProfile sel = work_profile(m, d, p, 2048);
  p.recompute = Recompute::Full;
  const WorkProfile full = work_profile(m, d, p, 2048);
  CHECK(none.layer.recompute_ns == 0);
  // Selective recomputes the attention core only.
  CHECK(sel.layer.recompute_ns == sel.layer.attention_forward_ns);
  CHECK(sel.layer.recompute_ns < full.layer.recompute_ns);
  CHECK(full.layer.recompute_ns == full.layer.forward_ns);
  // Recomputing 3 of a stage's 12 layers (96 over pp 8): a quarter of the
  // forward per layer on average, and a quarter of the forward's two TP
  // all-reduces repeated in the backward (2 + 2/4 = 2.5 calls).
  p.recompute_layers = 3;
  const WorkProfile some = work_profile(m, d, p, 2048);
  CHECK(static_cast<double>(some.layer.recompute_ns) ==
        doctest::Approx(static_cast<double>(full.layer.forward_ns) / 4.0).epsilon(1e-6));
  CHECK(some.layer.tp_backward.count == doctest::Approx(2.5));
  // Backward covers input and weight gradients: more than the input share.
  CHECK(none.layer.backward_input_ns < none.layer.backward_ns);
  CHECK(none.layer.backward_ns > none.layer.forward_ns);
}

TEST_CASE("compute model: shape fall-off, causal attention and FP8") {
  // Tile quantisation: 4096 is a multiple of 128 -> 1; the fall-off with
  // d_half = 256 at d = 4096 is 4096/4352.
  CHECK(gemm_shape_efficiency(4096, 4096, 4096, 256.0) == doctest::Approx(4096.0 / 4352.0));
  // 130 rounds up to 256: share 130/256 on that axis.
  CHECK(gemm_shape_efficiency(130, 4096, 4096, 0.0) == doctest::Approx(130.0 / 256.0));
  const ModelSpec m = gpt3_175b();
  ParallelPlan p = plan_175b();
  const DeviceSpec& h100 = device_preset("h100-sxm-80gb");
  const WorkProfile bf16 = work_profile(m, h100, p, 2048);
  // Causal flash attention: 2*2*b*(a/t)*s*s*d/2 = 2*s^2*h/t FLOPs per layer.
  const double attn_flops = 2.0 * 2048.0 * 2048.0 * 12288.0 / 8.0;
  // GEMMs: 2*tokens*h*(3h + h + 4h + 4h)/t = 24*s*h^2/t.
  const double gemm_flops = 24.0 * 2048.0 * 12288.0 * 12288.0 / 8.0;
  CHECK(bf16.layer.forward_flops == doctest::Approx(attn_flops + gemm_flops));
  p.precision = Precision::Fp8;
  const WorkProfile fp8 = work_profile(m, h100, p, 2048);
  CHECK(fp8.layer.gemm_forward_ns < bf16.layer.gemm_forward_ns);
  // Attention stays BF16.
  CHECK(fp8.layer.attention_forward_ns == bf16.layer.attention_forward_ns);
}

TEST_CASE("model FLOPs match Megatron's 72*B*s*l*h^2*(1 + s/(6h) + V/(12*l*h))") {
  const ModelSpec m = gpt3_175b();
  const ParallelPlan p = plan_175b();
  const double B = 256, s = 2048, l = 96, h = 12288, V = 51200;
  const double expected = 72.0 * B * s * l * h * h * (1.0 + s / (6.0 * h) + V / (12.0 * l * h));
  CHECK(model_flops_per_iteration(m, p, 2048) == doctest::Approx(expected));
}
