// Weighted max-min fair sharing by progressive filling (water-filling), on
// one self-contained problem: links with capacities, flows that each cross a
// set of links and carry a weight (> 0; 1 for plain max-min). FlowNetwork
// builds one such problem per connected component of flows that changed and
// writes the rates back.
//
// Weighted max-min (Bertsekas & Gallager, Data Networks, 6.5.2): the rates
// such that no flow can gain without taking from a flow whose rate per unit
// weight is no larger; on one link shared by flows of weights w_i, flow i
// gets w_i / sum(w) of it (what weighted fair queueing between traffic
// classes gives), and bandwidth a flow cannot use elsewhere goes to the
// others (work-conserving). With every weight 1 this is plain max-min.
//
// Algorithm: every link starts with its capacity and the weight of its
// unfrozen flows; its fair share per unit weight is capacity_left /
// unfrozen_weight. Repeatedly take the link with the smallest share (a
// min-heap with lazy deletion), give each of its unfrozen flows weight x that
// share, freeze them and subtract their rates from every other link they
// cross (whose share then changes: one fresh heap entry per such link and
// step). Each (flow, link) incidence is touched once and
// causes at most one heap entry, so with P incidences and L links:
//   time O((L + P) log(L + P)), memory O(L + P).
// Ties (equal shares) are broken by link index, so results are deterministic.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

namespace parashift::sim {

/// Links and flows in compressed form: flow f crosses links
/// flow_links[flow_begin[f] .. flow_begin[f + 1]).
class MaxMinProblem {
 public:
  void clear();
  /// Adds a link; returns its index (0, 1, ...).
  int add_link(double capacity_Bps);
  /// Adds a flow of `weight` (> 0) crossing `links` (indices from add_link,
  /// each at most once); returns its index.
  int add_flow(std::span<const int> links, double weight = 1.0);

  int link_count() const { return static_cast<int>(capacity_Bps_.size()); }
  int flow_count() const { return static_cast<int>(flow_begin_.size()) - 1; }
  double capacity_Bps(int link) const { return capacity_Bps_[link]; }
  double weight(int flow) const { return weight_[flow]; }
  std::span<const int> links_of(int flow) const {
    return {flow_links_.data() + flow_begin_[flow], flow_begin_[flow + 1] - flow_begin_[flow]};
  }

 private:
  std::vector<double> capacity_Bps_;
  std::vector<std::size_t> flow_begin_{0};
  std::vector<int> flow_links_;
  std::vector<double> weight_;
};

/// Reusable buffers for solve_max_min (avoids allocation on every call).
struct MaxMinScratch {
  struct HeapEntry {
    double share_Bps;
    int link;
    std::uint32_t version;
  };
  std::vector<double> left_Bps;
  std::vector<int> unfrozen;
  std::vector<double> unfrozen_weight;
  std::vector<std::uint32_t> version;
  std::vector<std::size_t> link_begin;
  std::vector<int> link_flows;
  std::vector<char> frozen;
  std::vector<char> touched;
  std::vector<int> touched_links;
  std::vector<HeapEntry> heap;
};

/// Writes the weighted max-min fair rate of every flow into `rates_Bps` (resized to
/// flow_count()). A flow crossing a zero-capacity link gets rate 0; a flow
/// crossing no link gets rate 0 too (it has no constraint; callers never
/// build one).
void solve_max_min(const MaxMinProblem& problem, std::vector<double>& rates_Bps,
                   MaxMinScratch& scratch);

}  // namespace parashift::sim
