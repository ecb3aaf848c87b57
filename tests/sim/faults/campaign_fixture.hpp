// The small campaign scenario and file helpers the campaign tests share.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "tests/temp_dir.hpp"

namespace parashift::test {

// Llama-3 70B on 256 H100s (32 DGX hosts), racks of 4 hosts, replicas on
// the next host of the same rack (domain node), so host 1 keeps host 0's.
inline const char* kScenario = R"(name: faults-small
model: llama3-70b
cluster:
  device: h100-sxm-80gb
  topology: {generator: rail-fat-tree, node: dgx-h100, nodes: 32, tiers: 2, oversubscription: 1}
training: {global_batch: 512, seq_len: 8192}
plan: {tp: 8, pp: 4, dp: 8, virtual_stages: 5, schedule: interleaved_1f1b, recompute: selective,
       sequence_parallel: true, optimizer_sharding: distributed}
run: {seed: 7}
faults:
  gpu_mtbf_hours: 2000
  node_mtbf_hours: 4000
  nic_mtbf_hours: 8000
  link_mtbf_hours: 20000
  link_flap: {probability: 0.5, flaps: 2, period: 1min}
  heartbeat_timeout: 10s
  spares: 16
  hosts_per_rack: 4
  days: 2
  snapshot: {interval: auto, replicas: 2, domain: node}
  baseline: {checkpoint_interval: 20min, storage_gbps: 800, restart: 5min}
)";

inline std::filesystem::path write_file(const std::string& name, const std::string& text) {
  const std::filesystem::path dir = process_temp_dir().path();
  std::filesystem::create_directories(dir);
  const std::filesystem::path file = dir / name;
  std::ofstream(file) << text;
  return file;
}

inline std::string read_file(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace parashift::test
