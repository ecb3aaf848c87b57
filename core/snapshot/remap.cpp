#include "core/snapshot/remap.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace parashift::core {

const char* to_string(Nearness nearness) {
  switch (nearness) {
    case Nearness::SameHost:
      return "same host";
    case Nearness::SameRack:
      return "same rack";
    case Nearness::Anywhere:
      return "other rack";
  }
  return "?";
}

RemapResult remap_to_spares(const std::vector<LostRank>& lost, std::vector<int>& spares,
                            const std::function<GpuPlace(int gpu)>& place_of) {
  RemapResult result;
  std::vector<LostRank> order = lost;
  std::sort(order.begin(), order.end(), [&](const LostRank& a, const LostRank& b) {
    return std::make_tuple(place_of(a.gpu).host, a.rank) <
           std::make_tuple(place_of(b.gpu).host, b.rank);
  });
  std::map<int, int> free_on_host;
  for (int s : spares) ++free_on_host[place_of(s).host];
  std::map<int, int> chosen_host_of_group;  // lost host -> spare host used for its ranks
  for (const LostRank& r : order) {
    if (spares.empty()) {
      result.unplaced.push_back(r);
      continue;
    }
    const GpuPlace from = place_of(r.gpu);
    const auto group = chosen_host_of_group.find(from.host);
    auto key = [&](int spare) {
      const GpuPlace to = place_of(spare);
      const Nearness n = to.host == from.host   ? Nearness::SameHost
                         : to.rack == from.rack ? Nearness::SameRack
                                                : Nearness::Anywhere;
      const bool with_group = group != chosen_host_of_group.end() && group->second == to.host;
      return std::make_tuple(static_cast<int>(n), with_group ? 0 : 1, -free_on_host[to.host],
                             spare);
    };
    const auto best = std::min_element(spares.begin(), spares.end(),
                                       [&](int a, int b) { return key(a) < key(b); });
    const int to_gpu = *best;
    const GpuPlace to = place_of(to_gpu);
    Placement p;
    p.rank = r.rank;
    p.from_gpu = r.gpu;
    p.to_gpu = to_gpu;
    p.nearness = static_cast<Nearness>(std::get<0>(key(to_gpu)));
    result.placed.push_back(p);
    --free_on_host[to.host];
    chosen_host_of_group.emplace(from.host, to.host);
    spares.erase(best);
  }
  return result;
}

}  // namespace parashift::core
