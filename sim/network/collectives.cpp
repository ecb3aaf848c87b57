#include "sim/network/collectives.hpp"

#include <algorithm>
#include <array>
#include <stdexcept>
#include <string>

#include "core/cost/nccl_tree.hpp"
#include "sim/collective.hpp"
#include "sim/network/coflow.hpp"

namespace parashift::sim {

const char* to_string(CollectiveAlgorithm algorithm) {
  switch (algorithm) {
    case CollectiveAlgorithm::Ring:
      return "ring";
    case CollectiveAlgorithm::AllPairs:
      return "all_pairs";
    case CollectiveAlgorithm::DoubleBinaryTree:
      return "double_binary_tree";
    case CollectiveAlgorithm::Hierarchical:
      return "hierarchical";
  }
  return "?";
}

namespace {

[[noreturn]] void fail(const CollectiveSpec& spec, const std::string& what) {
  throw std::invalid_argument(std::string("collective ") + core::to_string(spec.kind) + " (" +
                              to_string(spec.algorithm) + ", " + std::to_string(spec.gpus.size()) +
                              " GPUs): " + what);
}

// `rounds` rounds in which every member sends `bytes` to the member `shift`
// places ahead; shift_step > 0 makes round k use shift + k * shift_step.
Chain ring_chain(std::vector<int> members, int rounds, double bytes, int shift = 1,
                 int shift_step = 0) {
  const int n = static_cast<int>(members.size());
  if (n <= 1) return Chain{};
  return Chain{rounds, [members = std::move(members), n, bytes, shift, shift_step](
                           int round, std::vector<Transfer>& out) {
                 const int k = shift + round * shift_step;
                 for (int i = 0; i < n; ++i)
                   out.push_back({members[i], members[(i + k) % n], bytes});
               }};
}

std::vector<Phase> ring_plan(const CollectiveSpec& spec) {
  const int n = static_cast<int>(spec.gpus.size());
  const double chunk = spec.bytes / n;
  switch (spec.kind) {
    case core::CollectiveKind::AllReduce:
      return {{ring_chain(spec.gpus, 2 * (n - 1), chunk)}};
    case core::CollectiveKind::ReduceScatter:
    case core::CollectiveKind::AllGather:
      return {{ring_chain(spec.gpus, n - 1, chunk)}};
    case core::CollectiveKind::AllToAll:
      return {{ring_chain(spec.gpus, n - 1, chunk, 1, 1)}};
    case core::CollectiveKind::SendRecv:
      break;
  }
  return {};
}

std::vector<Phase> all_pairs_plan(const CollectiveSpec& spec) {
  const std::vector<int> gpus = spec.gpus;
  const int n = static_cast<int>(gpus.size());
  const double chunk = spec.bytes / n;
  return {{Chain{1, [gpus, n, chunk](int, std::vector<Transfer>& out) {
                   for (int i = 0; i < n; ++i) {
                     for (int j = 0; j < n; ++j) {
                       if (i != j) out.push_back({gpus[i], gpus[j], chunk});
                     }
                   }
                 }}}};
}

std::vector<Phase> double_tree_plan(const CollectiveSpec& spec) {
  const int n = static_cast<int>(spec.gpus.size());
  const int chunks = spec.pipeline_chunks;
  // stages[t][s]: the (sender, receiver) rank pairs of stage s in tree t.
  // Stages 0..D-1 reduce up (deepest level first), D..2D-1 broadcast down.
  std::array<std::vector<std::vector<std::pair<int, int>>>, 2> stages;
  int max_stages = 0;
  const auto trees = core::nccl_double_binary_tree(n);
  for (int t = 0; t < 2; ++t) {
    const core::RankTree& tree = trees[t];
    const int d = tree.height;
    stages[t].resize(static_cast<std::size_t>(2 * d));
    for (int r = 0; r < n; ++r) {
      if (tree.parent[r] < 0) continue;
      const int level = tree.depth[r];  // 1..D
      stages[t][d - level].emplace_back(spec.gpus[r], spec.gpus[tree.parent[r]]);
      stages[t][d + level - 1].emplace_back(spec.gpus[tree.parent[r]], spec.gpus[r]);
    }
    max_stages = std::max(max_stages, 2 * d);
  }
  const double chunk_bytes = spec.bytes / 2 / chunks;
  return {{Chain{chunks + max_stages - 1,
                 [stages, chunks, chunk_bytes](int round, std::vector<Transfer>& out) {
                   for (const auto& tree_stages : stages) {
                     const int count = static_cast<int>(tree_stages.size());
                     for (int s = 0; s < count; ++s) {
                       const int chunk = round - s;
                       if (chunk < 0 || chunk >= chunks) continue;
                       for (const auto& [src, dst] : tree_stages[s]) {
                         out.push_back({src, dst, chunk_bytes});
                       }
                     }
                   }
                 }}}};
}

std::vector<Phase> hierarchical_plan(const CollectiveSpec& spec) {
  const int n = static_cast<int>(spec.gpus.size());
  const int local = spec.gpus_per_host;
  const int hosts = n / local;
  Phase reduce_scatter;
  Phase all_gather;
  for (int h = 0; h < hosts; ++h) {
    std::vector<int> members(spec.gpus.begin() + h * local, spec.gpus.begin() + (h + 1) * local);
    reduce_scatter.push_back(ring_chain(members, local - 1, spec.bytes / local));
    all_gather.push_back(ring_chain(std::move(members), local - 1, spec.bytes / local));
  }
  // Each rank now owns bytes/local; ring all-reduce it across hosts.
  Phase across;
  const double shard = spec.bytes / local;
  for (int j = 0; j < local; ++j) {
    std::vector<int> members;
    for (int h = 0; h < hosts; ++h) members.push_back(spec.gpus[h * local + j]);
    across.push_back(ring_chain(std::move(members), 2 * (hosts - 1), shard / hosts));
  }
  return {std::move(reduce_scatter), std::move(across), std::move(all_gather)};
}

void validate(const CollectiveSpec& spec) {
  std::vector<int> sorted = spec.gpus;
  std::sort(sorted.begin(), sorted.end());
  if (std::adjacent_find(sorted.begin(), sorted.end()) != sorted.end()) {
    fail(spec, "a GPU is listed twice; expected distinct GPUs");
  }
  const bool all_reduce = spec.kind == core::CollectiveKind::AllReduce;
  const int n = static_cast<int>(spec.gpus.size());
  if (spec.kind == core::CollectiveKind::SendRecv) {
    if (n != 2) fail(spec, "expected exactly 2 GPUs {src, dst}");
    return;
  }
  switch (spec.algorithm) {
    case CollectiveAlgorithm::Ring:
      return;
    case CollectiveAlgorithm::AllPairs:
      if (spec.kind != core::CollectiveKind::AllToAll)
        fail(spec, "all_pairs is for all_to_all only");
      return;
    case CollectiveAlgorithm::DoubleBinaryTree:
      if (!all_reduce) fail(spec, "double_binary_tree is for all_reduce only");
      if (spec.pipeline_chunks < 1) fail(spec, "expected pipeline_chunks >= 1");
      return;
    case CollectiveAlgorithm::Hierarchical:
      if (!all_reduce) fail(spec, "hierarchical is for all_reduce only");
      if (spec.gpus_per_host < 1 || n % spec.gpus_per_host != 0) {
        fail(spec, "gpus_per_host = " + std::to_string(spec.gpus_per_host) +
                       "; expected a divisor of the GPU count");
      }
      return;
  }
}

}  // namespace

void run_collective(FlowNetwork& network, const CollectiveSpec& spec,
                    std::function<void(TimeNs done_ns)> on_done) {
  validate(spec);
  std::vector<Phase> phases;
  const int n = static_cast<int>(spec.gpus.size());
  if (n > 1 && spec.bytes > 0) {
    if (spec.kind == core::CollectiveKind::SendRecv) {
      const int src = spec.gpus[0];
      const int dst = spec.gpus[1];
      const double bytes = spec.bytes;
      phases = {{Chain{1, [src, dst, bytes](int, std::vector<Transfer>& out) {
                         out.push_back({src, dst, bytes});
                       }}}};
    } else {
      switch (spec.algorithm) {
        case CollectiveAlgorithm::Ring:
          phases = ring_plan(spec);
          break;
        case CollectiveAlgorithm::AllPairs:
          phases = all_pairs_plan(spec);
          break;
        case CollectiveAlgorithm::DoubleBinaryTree:
          phases = double_tree_plan(spec);
          break;
        case CollectiveAlgorithm::Hierarchical:
          phases = hierarchical_plan(spec);
          break;
      }
    }
  }
  run_coflow(network, std::move(phases), spec.flow_hash, std::move(on_done), spec.traffic);
}

double algbw_Bps(double bytes, TimeNs duration_ns) {
  return duration_ns > 0 ? bytes / core::ns_to_s(duration_ns) : 0.0;
}

double busbw_Bps(core::CollectiveKind kind, int ranks, double bytes, TimeNs duration_ns) {
  return algbw_Bps(bytes, duration_ns) * bus_factor(kind, ranks);
}

}  // namespace parashift::sim
