#include <doctest/doctest.h>

#include "core/cost/memory.hpp"
#include "test_models.hpp"

using namespace parashift::core;
using parashift::core::test::gpt3_175b;
using parashift::core::test::plan_175b;

TEST_CASE("activations per layer follow Korthikanti et al. 2022 (GPT-3 175B, t=8)") {
  ModelSpec m = gpt3_175b();
  m.attention = AttentionKernel::Unfused;  // the paper's kernels keep the s x s scores
  ParallelPlan p = plan_175b();
  // s*b*h = 2048 * 1 * 12288 = 25'165'824.
  // No recompute, no SP: sbh*(10 + 24/8 + 5*96*2048/(12288*8)) = sbh*(10 + 3 + 10) = 578'813'952.
  CHECK(layer_activation_bytes(m, p, 2048) == doctest::Approx(578'813'952.0));
  // TP + SP: sbh/8 * (34 + 5*96*2048/12288) = sbh/8 * 114 = 358'612'992.
  p.sequence_parallel = true;
  CHECK(layer_activation_bytes(m, p, 2048) == doctest::Approx(358'612'992.0));
  // Selective + SP: 34*sbh/8 = 106'954'752 (the paper's 175B figure).
  p.recompute = Recompute::Selective;
  CHECK(layer_activation_bytes(m, p, 2048) == doctest::Approx(106'954'752.0));
  // Full + SP: only the layer input, 2*sbh/8 = 6'291'456.
  p.recompute = Recompute::Full;
  CHECK(layer_activation_bytes(m, p, 2048) == doctest::Approx(6'291'456.0));
  // Full without SP: 2*sbh = 50'331'648.
  p.sequence_parallel = false;
  CHECK(layer_activation_bytes(m, p, 2048) == doctest::Approx(50'331'648.0));
  // Full on 3 of a stage's 12 layers: the mean of a quarter keeping the
  // input and three quarters keeping all, 50'331'648/4 + 3*578'813'952/4 =
  // 446'693'376.
  p.recompute_layers = 3;
  CHECK(layer_activation_bytes(m, p, 2048) == doctest::Approx(446'693'376.0));
}

TEST_CASE("in-flight micro-batches on stage 0 per schedule") {
  ParallelPlan p = plan_175b();  // p=8, m = 256/(4*1) = 64
  CHECK(in_flight_micro_batches(p) == doctest::Approx(8.0));
  p.schedule = Schedule::Interleaved1F1B;
  p.virtual_stages = 3;
  // p*(1 + (p-1)/(p*v)) = 8*(1 + 7/24) = 10.333...
  CHECK(in_flight_micro_batches(p) == doctest::Approx(8.0 * (1.0 + 7.0 / 24.0)));
  p.schedule = Schedule::GPipe;
  p.virtual_stages = 1;
  CHECK(in_flight_micro_batches(p) == doctest::Approx(64.0));
}

TEST_CASE("weights, gradients and optimizer states follow the ZeRO paper") {
  const ModelSpec m = gpt3_175b();
  ParallelPlan p = plan_175b();
  // One layer: 12h^2 + 2h = 1'811'963'904; stage 0 holds 96/8 = 12 layers and
  // the 51200 x 12288 embedding: 22'372'712'448 params, /t=8 -> 2'796'589'056.
  const double params = 2'796'589'056.0;
  MemoryEstimate mem = peak_memory(m, p, 2048);
  CHECK(mem.weights_bytes == doctest::Approx(2.0 * params));
  CHECK(mem.gradients_bytes == doctest::Approx(2.0 * params));
  CHECK(mem.optimizer_bytes == doctest::Approx(12.0 * params));
  // Activations (fused attention): 12 layers x 8 in flight x sbh*(10 + (24 + 4*96/12288)/8).
  const double sbh = 2048.0 * 12288.0;
  CHECK(mem.activations_bytes ==
        doctest::Approx(12.0 * 8.0 * sbh * (10.0 + (24.0 + 4.0 * 96.0 / 12288.0) / 8.0)));
  // The distributed optimizer shards the 12 B over dp=4.
  p.optimizer_sharding = OptimizerSharding::Distributed;
  mem = peak_memory(m, p, 2048);
  CHECK(mem.optimizer_bytes == doctest::Approx(3.0 * params));
  CHECK(mem.weights_bytes == doctest::Approx(2.0 * params));
}

TEST_CASE("fused attention keeps no s x s scores, GQA and SwiGLU change the per-layer terms") {
  ModelSpec m = gpt3_175b();  // fused by default
  ParallelPlan p = plan_175b();
  // sbh = 25'165'824; no SP: sbh*(10 + (24 + 4*96/12288)/8): the FP32 log-sum-exp
  // (4 B per head and token) replaces the 5as/h = 80 of the unfused scores.
  const double sbh = 2048.0 * 12288.0;
  CHECK(layer_activation_bytes(m, p, 2048) ==
        doctest::Approx(sbh * (10.0 + (24.0 + 4.0 * 96.0 / 12288.0) / 8.0)));
  // Llama 3.1 70B: g = 8/64, f/h = 3.5, SwiGLU: split terms 2 + 4g + 2 + 6*3.5 = 25.5.
  const ModelSpec llama = parashift::core::test::llama3_70b();
  const ActivationTerms terms = activation_terms(llama);
  CHECK(terms.unsplit_per_sbh == doctest::Approx(10.0));
  CHECK(terms.split_per_sbh == doctest::Approx(25.5));
}

TEST_CASE("a Llama-3.1-70B recipe without recompute fits an 80 GB H100 with fused attention") {
  // NeMo's recipe: tp4 pp4 cp2 vp5, SP, distributed optimizer, micro-batch 1,
  // seq 8192, 128 GPUs (dp 4), global batch 128 (m = 32 per replica).
  const ModelSpec m = parashift::core::test::llama3_70b();
  ParallelPlan p;
  p.tp = 4;
  p.pp = 4;
  p.cp = 2;
  p.dp = 4;
  p.virtual_stages = 5;
  p.schedule = Schedule::Interleaved1F1B;
  p.sequence_parallel = true;
  p.optimizer_sharding = OptimizerSharding::Distributed;
  p.micro_batch = 1;
  p.global_batch = 128;
  // Activations per layer: s/c*b*h = 4096*8192 = 33'554'432 sbh bytes units,
  // (10 + 25.5 + 4*64/8192)/4 = 8.8828 per sbh -> 298 MB; stage 0 holds
  // 20 layers x 4*(1 + 3/20) = 4.6 micro-batches -> 27.4 GB. Weights etc.:
  // (20 layers x 0.856e9 + 128256*8192)/4 = 4.54e9 params x (4 + 12/4) B = 31.8 GB.
  const MemoryEstimate mem = peak_memory(m, p, 8192);
  CHECK(mem.activations_bytes ==
        doctest::Approx(33'554'432.0 * (35.5 + 256.0 / 8192.0) / 4.0 * 20.0 * 4.6));
  CHECK(mem.total_bytes() < 80e9 * 0.95);
  // Unfused, the 5as/h = 5*64*4096/8192 = 160 term alone adds 160/4 per sbh
  // per layer, over 4x the fused activations: the plan no longer fits.
  ModelSpec unfused = m;
  unfused.attention = AttentionKernel::Unfused;
  CHECK(peak_memory(unfused, p, 8192).total_bytes() > 80e9);
}

TEST_CASE("FSDP holds a layer's gathered parameters and gradients beside its shards") {
  const ModelSpec m = gpt3_175b();
  ParallelPlan p = plan_175b();
  p.optimizer_sharding = OptimizerSharding::Fsdp;
  const double layer = m.layer_params() / 8.0;  // per GPU after tp = 8
  const double params = 2'796'589'056.0;        // stage 0 (as above)
  const MemoryEstimate mem = peak_memory(m, p, 2048);
  // 2 B x params / dp + two gathered layers; 2 B / dp + one unsharded layer of gradients.
  CHECK(mem.weights_bytes == doctest::Approx(2.0 * params / 4.0 + 2.0 * 2.0 * layer));
  CHECK(mem.gradients_bytes == doctest::Approx(2.0 * params / 4.0 + 2.0 * layer));
  CHECK(mem.optimizer_bytes == doctest::Approx(12.0 * params / 4.0));
  CHECK(resident_bytes_per_param(p) == doctest::Approx(16.0 / 4.0));
  // HSDP over 2 of the 4: every shard is half the stage, the gathered layers
  // the same.
  p.dp_shard = 2;
  const MemoryEstimate hybrid = peak_memory(m, p, 2048);
  CHECK(hybrid.weights_bytes == doctest::Approx(2.0 * params / 2.0 + 2.0 * 2.0 * layer));
  CHECK(hybrid.gradients_bytes == doctest::Approx(2.0 * params / 2.0 + 2.0 * layer));
  CHECK(hybrid.optimizer_bytes == doctest::Approx(12.0 * params / 2.0));
  CHECK(resident_bytes_per_param(p) == doctest::Approx(16.0 / 2.0));
}
