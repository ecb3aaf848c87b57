// Models and clusters shared by the planner tests.
#pragma once

#include "core/cost/cluster_view.hpp"
#include "core/device_spec.hpp"
#include "core/model_spec.hpp"
#include "core/planner/planner.hpp"
#include "core/units.hpp"

namespace parashift::core::test {

inline ModelSpec make_model(const char* name, int layers, int hidden, int heads, int kv_heads,
                            int ffn_hidden, FfnKind ffn, int vocab, bool tied) {
  ModelSpec m;
  m.name = name;
  m.layers = layers;
  m.hidden = hidden;
  m.heads = heads;
  m.kv_heads = kv_heads;
  m.ffn_hidden = ffn_hidden;
  m.ffn_kind = ffn;
  m.vocab = vocab;
  m.tied_embeddings = tied;
  return m;
}

// 4 layers, 4 heads: small enough to count its plans by hand.
inline ModelSpec tiny_model() {
  return make_model("tiny", 4, 256, 4, 4, 1024, FfnKind::Gelu, 1000, true);
}
inline ModelSpec gpt3_175b() {
  return make_model("gpt3-175b", 96, 12288, 96, 96, 49152, FfnKind::Gelu, 51200, true);
}
inline ModelSpec llama2_7b() {
  return make_model("llama2-7b", 32, 4096, 32, 32, 11008, FfnKind::SwiGlu, 32000, false);
}

// A two-level cluster of `gpus` devices, 8 per node, at the device's NVLink
// and NIC rates with 2 us / 5 us hop latencies.
inline ClusterView cluster_of(const DeviceSpec& device, int gpus) {
  ClusterView c;
  c.gpus = gpus;
  c.gpus_per_node = 8;
  c.intra_node_Bps = device.nvlink_Bps;
  c.inter_node_Bps = device.nic_Bps;
  c.intra_node_latency_ns = 2 * kNsPerUs;
  c.inter_node_latency_ns = 5 * kNsPerUs;
  return c;
}

inline PlannerInput planner_input(const ModelSpec& model, const char* device, int gpus,
                                  int global_batch, int seq_len) {
  PlannerInput in;
  in.model = model;
  in.device = device_preset(device);
  in.cluster = cluster_of(in.device, gpus);
  in.global_batch = global_batch;
  in.seq_len = seq_len;
  return in;
}

}  // namespace parashift::core::test
