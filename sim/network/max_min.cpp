#include "sim/network/max_min.hpp"

#include <algorithm>
#include <limits>

#include "core/assert.hpp"

namespace parashift::sim {

void MaxMinProblem::clear() {
  capacity_Bps_.clear();
  flow_begin_.assign(1, 0);
  flow_links_.clear();
  weight_.clear();
}

int MaxMinProblem::add_link(double capacity_Bps) {
  PARASHIFT_ASSERT(capacity_Bps >= 0, "link capacity must be >= 0");
  capacity_Bps_.push_back(capacity_Bps);
  return link_count() - 1;
}

int MaxMinProblem::add_flow(std::span<const int> links, double weight) {
  PARASHIFT_ASSERT(weight > 0 && weight < std::numeric_limits<double>::infinity(),
                   "flow weight must be positive and finite");
  for (const int l : links) {
    PARASHIFT_ASSERT(l >= 0 && l < link_count(), "flow crosses an unknown link");
    flow_links_.push_back(l);
  }
  flow_begin_.push_back(flow_links_.size());
  weight_.push_back(weight);
  return flow_count() - 1;
}

namespace {

// Min-heap order: smaller share first, then smaller link index.
struct Later {
  bool operator()(const MaxMinScratch::HeapEntry& a, const MaxMinScratch::HeapEntry& b) const {
    return a.share_Bps != b.share_Bps ? a.share_Bps > b.share_Bps : a.link > b.link;
  }
};

void push(MaxMinScratch& s, int link) {
  s.heap.push_back(
      {std::max(0.0, s.left_Bps[link]) / s.unfrozen_weight[link], link, s.version[link]});
  std::push_heap(s.heap.begin(), s.heap.end(), Later{});
}

}  // namespace

void solve_max_min(const MaxMinProblem& problem, std::vector<double>& rates_Bps, MaxMinScratch& s) {
  const int links = problem.link_count();
  const int flows = problem.flow_count();
  rates_Bps.assign(static_cast<std::size_t>(flows), 0.0);

  // Transpose flow -> links into link -> flows (counting sort).
  s.link_begin.assign(static_cast<std::size_t>(links) + 1, 0);
  for (int f = 0; f < flows; ++f) {
    for (const int l : problem.links_of(f)) ++s.link_begin[l + 1];
  }
  for (int l = 0; l < links; ++l) s.link_begin[l + 1] += s.link_begin[l];
  s.link_flows.resize(s.link_begin.back());
  s.unfrozen.assign(static_cast<std::size_t>(links), 0);
  s.unfrozen_weight.assign(static_cast<std::size_t>(links), 0.0);
  for (int f = 0; f < flows; ++f) {
    for (const int l : problem.links_of(f)) {
      s.link_flows[s.link_begin[l] + s.unfrozen[l]++] = f;
      s.unfrozen_weight[l] += problem.weight(f);
    }
  }

  s.left_Bps.resize(static_cast<std::size_t>(links));
  s.version.assign(static_cast<std::size_t>(links), 0);
  s.frozen.assign(static_cast<std::size_t>(flows), 0);
  s.touched.assign(static_cast<std::size_t>(links), 0);
  s.touched_links.clear();
  s.heap.clear();
  for (int l = 0; l < links; ++l) {
    s.left_Bps[l] = problem.capacity_Bps(l);
    if (s.unfrozen[l] > 0) push(s, l);
  }

  while (!s.heap.empty()) {
    std::pop_heap(s.heap.begin(), s.heap.end(), Later{});
    const MaxMinScratch::HeapEntry top = s.heap.back();
    s.heap.pop_back();
    const int l = top.link;
    if (top.version != s.version[l] || s.unfrozen[l] == 0) continue;  // stale
    // The bottleneck link: every unfrozen flow on it gets its weighted share.
    const double share = top.share_Bps;
    for (std::size_t i = s.link_begin[l]; i < s.link_begin[l + 1]; ++i) {
      const int f = s.link_flows[i];
      if (s.frozen[f]) continue;
      s.frozen[f] = 1;
      const double weight = problem.weight(f);
      const double rate = share * weight;
      rates_Bps[f] = rate;
      for (const int m : problem.links_of(f)) {
        s.left_Bps[m] -= rate;
        s.unfrozen_weight[m] -= weight;
        --s.unfrozen[m];
        if (m != l && !s.touched[m]) {
          s.touched[m] = 1;
          s.touched_links.push_back(m);
        }
      }
    }
    PARASHIFT_ASSERT(s.unfrozen[l] == 0);
    // One fresh heap entry per link whose share changed (not one per flow).
    for (const int m : s.touched_links) {
      s.touched[m] = 0;
      if (s.unfrozen[m] > 0) {
        ++s.version[m];
        push(s, m);
      }
    }
    s.touched_links.clear();
  }
}

}  // namespace parashift::sim
