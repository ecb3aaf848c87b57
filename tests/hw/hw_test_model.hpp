// The tiny synthetic model the hw tests train: 4 layers, hidden 32, 4 heads,
// MLP 64, sequences of 8 tokens, 4 sequences per iteration.
#pragma once

#include <filesystem>
#include <string>

#include <unistd.h>

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"
#include "hw/exec/hw_backend.hpp"
#include "tests/temp_dir.hpp"

namespace parashift::test {

inline core::ModelSpec tiny_model() {
  core::ModelSpec m;
  m.name = "tiny";
  m.layers = 4;
  m.hidden = 32;
  m.heads = 4;
  m.kv_heads = 4;
  m.ffn_hidden = 64;
  m.vocab = 16;
  return m;
}
constexpr int kTinySeq = 8;

inline core::ParallelPlan tiny_plan(int tp, int pp, int dp) {
  core::ParallelPlan p;
  p.tp = tp;
  p.pp = pp;
  p.dp = dp;
  p.micro_batch = 1;
  p.global_batch = 4;
  p.recompute = core::Recompute::None;
  p.optimizer_sharding = core::OptimizerSharding::None;
  return p;
}

inline hw::HwOptions tiny_options(hw::OptimizerKind kind, const std::string& job) {
  hw::HwOptions o;
  o.optimizer.kind = kind;
  o.optimizer.learning_rate = kind == hw::OptimizerKind::Adam ? 1e-2f : 0.5f;
  o.shm_root = process_temp_dir().path();
  o.job = job + "-" + std::to_string(::getpid());
  o.dp_bucket_bytes = 4096;  // several buckets per iteration
  return o;
}

}  // namespace parashift::test
