// Model and plan fixtures shared by the cost-model tests.
#pragma once

#include "core/model_spec.hpp"
#include "core/parallel_plan.hpp"

namespace parashift::core::test {

// GPT-3 175B (Brown et al. 2020), as Korthikanti et al. 2022 use it.
inline ModelSpec gpt3_175b() {
  ModelSpec m;
  m.name = "gpt3-175b";
  m.layers = 96;
  m.hidden = 12288;
  m.heads = 96;
  m.kv_heads = 96;
  m.ffn_hidden = 4 * 12288;
  m.ffn_kind = FfnKind::Gelu;
  m.vocab = 51200;
  return m;
}

// Llama 3.1 70B: SwiGLU, GQA with 8 KV heads.
inline ModelSpec llama3_70b() {
  ModelSpec m;
  m.name = "llama3-70b";
  m.layers = 80;
  m.hidden = 8192;
  m.heads = 64;
  m.kv_heads = 8;
  m.ffn_hidden = 28672;
  m.ffn_kind = FfnKind::SwiGlu;
  m.vocab = 128256;
  m.tied_embeddings = false;
  return m;
}

inline ParallelPlan plan_175b() {
  ParallelPlan p;
  p.tp = 8;
  p.pp = 8;
  p.dp = 4;
  p.micro_batch = 1;
  p.global_batch = 256;
  return p;
}

}  // namespace parashift::core::test
