#include <doctest/doctest.h>

#include "core/cost/memory.hpp"
#include "test_models.hpp"

using namespace parashift::core;
using parashift::core::test::gpt3_175b;
using parashift::core::test::plan_175b;

TEST_CASE("activations per layer follow Korthikanti et al. 2022 (GPT-3 175B, t=8)") {
  const ModelSpec m = gpt3_175b();
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
  // Activations: 12 layers x 8 in flight x 578'813'952 B.
  CHECK(mem.activations_bytes == doctest::Approx(12.0 * 8.0 * 578'813'952.0));
  // The distributed optimizer shards the 12 B over dp=4.
  p.optimizer_sharding = OptimizerSharding::Distributed;
  mem = peak_memory(m, p, 2048);
  CHECK(mem.optimizer_bytes == doctest::Approx(3.0 * params));
  CHECK(mem.weights_bytes == doctest::Approx(2.0 * params));
  // FSDP / ZeRO-3 shards all 16 B.
  p.optimizer_sharding = OptimizerSharding::Fsdp;
  mem = peak_memory(m, p, 2048);
  CHECK(mem.weights_bytes + mem.gradients_bytes + mem.optimizer_bytes ==
        doctest::Approx(16.0 * params / 4.0));
}
