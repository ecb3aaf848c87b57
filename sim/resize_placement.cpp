#include "sim/resize_placement.hpp"

#include <cstddef>

#include "core/rank_layout.hpp"

namespace parashift::sim {

std::vector<int> resize_placement(const core::ParallelPlan& was,
                                  const std::vector<int>& gpu_of_rank,
                                  const core::ParallelPlan& next, const std::vector<bool>& dead) {
  const auto alive = [&](int g) { return g >= 0 && !dead[static_cast<std::size_t>(g)]; };
  std::vector<int> out(static_cast<std::size_t>(next.gpus()), -1);
  std::vector<bool> taken(dead.size(), false);
  if (was.tp == next.tp && was.pp == next.pp && was.cp == next.cp &&
      static_cast<int>(gpu_of_rank.size()) == was.gpus()) {
    const core::RankLayout old_layout(was);
    const core::RankLayout new_layout(next);
    // The old replicas with every rank on a live GPU.
    std::vector<int> whole;
    for (int d = 0; d < was.dp; ++d) {
      bool ok = true;
      for (int r = 0; r < old_layout.ranks() && ok; ++r)
        if (old_layout.coord(r).dp == d) ok = alive(gpu_of_rank[static_cast<std::size_t>(r)]);
      if (ok) whole.push_back(d);
    }
    for (int r = 0; r < new_layout.ranks(); ++r) {
      core::RankCoord c = new_layout.coord(r);
      if (c.dp >= static_cast<int>(whole.size())) continue;
      c.dp = whole[static_cast<std::size_t>(c.dp)];
      const int g = gpu_of_rank[static_cast<std::size_t>(old_layout.rank(c))];
      out[static_cast<std::size_t>(r)] = g;
      taken[static_cast<std::size_t>(g)] = true;
    }
  }
  std::size_t g = 0;
  for (int& gpu : out) {
    if (gpu >= 0) continue;
    while (g < dead.size() && (dead[g] || taken[g])) ++g;
    if (g == dead.size()) return {};
    gpu = static_cast<int>(g);
    taken[g] = true;
  }
  return out;
}

}  // namespace parashift::sim
