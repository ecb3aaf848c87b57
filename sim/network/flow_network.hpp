// The flow-level network: transfers between GPUs are fluid flows along their
// topology route, sharing every link max-min fairly (SimGrid's "maxmin" model,
// without its TCP corrections).
//
//   A flow started at t0 competes for bandwidth from t0. Its rate is its
//   max-min fair share, recomputed whenever a flow starts or finishes or a link
//   changes bandwidth. Its last byte leaves the source at t_tx (the first ns
//   by which rate x time covers its bytes), the links it crossed are free from
//   t_tx, and `on_done` runs at t_tx + path latency (the sum of link
//   latencies): a lone flow takes bytes / bottleneck + latency, as PathModel.
//
// Kernel integration (SimGrid's lazy action updates): the network keeps one
// pending kernel event, at the earliest flow completion. A change (start,
// bandwidth change) does not recompute at once: it moves that event to now,
// so all changes made at one instant (a collective starting n flows) cost one
// recomputation. The event handler retires finished flows, then recomputes
// only the connected component(s) of flows sharing links with what changed:
// rates are re-solved (max_min.hpp), and each flow whose rate changed has its
// remaining bytes advanced by old rate x elapsed since its own last update
// and its finish time re-derived. Flows outside those components, and flows
// whose rate did not change, keep their state untouched.
//   cost per change: O(C log C) for a component with C (flow, link)
//   incidences, plus O(log F) per re-timed flow in the finish order.
//
// Exactness: remaining bytes are doubles advanced only when a flow's rate
// changes; a finish time is now + remaining / rate rounded up to an integer
// ns (or to the nearest ns when within floating noise of it), and a flow is
// retired exactly at its finish time, so no error accumulates over a run. A
// flow with under 1e-6 bytes left is finished.
//
// `on_done` always runs from its own kernel event, never inside a call into
// the network, so callbacks may start flows freely. Rates seen between a
// change and the recomputation at the same ns are the old ones.
#pragma once

#include <cstdint>
#include <functional>
#include <limits>
#include <set>
#include <span>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "core/traffic_class.hpp"
#include "sim/kernel.hpp"
#include "sim/network/max_min.hpp"
#include "topologies/topology.hpp"

namespace parashift::sim {

/// Names a flow; stays unique after the flow finishes (slots carry a generation).
struct FlowId {
  std::uint64_t value = 0;
  bool valid() const { return value != 0; }
  friend bool operator==(FlowId a, FlowId b) { return a.value == b.value; }
};

/// Counters for cost measurements (benchmarks, complexity checks).
struct FlowNetworkStats {
  std::uint64_t flows_started = 0;
  std::uint64_t flows_finished = 0;
  std::uint64_t updates = 0;         // network events handled
  std::uint64_t recomputations = 0;  // max-min solves (one per update with changes)
  std::uint64_t flows_rerated = 0;   // flows whose rate was re-solved, summed
};

class FlowNetwork {
 public:
  static constexpr double kDoneBytes = 1e-6;
  static constexpr TimeNs kNever = std::numeric_limits<TimeNs>::max();

  /// Link capacities are copied from `topology` here; change them with
  /// set_link_bandwidth below. Both references must outlive the network.
  FlowNetwork(Kernel& kernel, const topo::Topology& topology);
  ~FlowNetwork();
  FlowNetwork(const FlowNetwork&) = delete;
  FlowNetwork& operator=(const FlowNetwork&) = delete;

  /// Starts sending `bytes` from GPU `gpu_src` to GPU `gpu_dst` along
  /// topology.route(gpu_src, gpu_dst, flow_hash) (cached here per
  /// (src, dst, flow_hash): collectives repeat pairs). `on_done` runs when the last
  /// byte has arrived. A flow to itself or of <= 0 bytes uses no link and is
  /// done after the path latency (0 to itself). The flow weighs its class's
  /// weight (set_class_weights) in the links' weighted max-min sharing.
  FlowId start_flow(int gpu_src, int gpu_dst, double bytes, std::function<void()> on_done,
                    std::uint64_t flow_hash = 0,
                    core::TrafficClass traffic = core::TrafficClass::Other);
  /// Starts a flow across the one link `link` (traffic whose endpoints are not
  /// the job's GPUs: another tenant's); `on_done` runs after its last byte and
  /// the link's latency. Bytes > 0.
  FlowId start_link_flow(topo::LinkId link, double bytes, std::function<void()> on_done,
                         core::TrafficClass traffic);

  /// The weight of each class from now on; flows already sending are
  /// re-rated at the next update.
  void set_class_weights(const core::TrafficWeights& weights);
  const core::TrafficWeights& class_weights() const { return weights_; }

  /// Changes a link's capacity from now on (degradation, background load);
  /// `bandwidth_Bps` >= 0, and 0 stalls the flows crossing it.
  void set_link_bandwidth(topo::LinkId link, double bandwidth_Bps);
  double link_bandwidth_Bps(topo::LinkId link) const { return links_[link].capacity_Bps; }

  /// Bytes the link has carried since the network was made, up to now.
  double link_bytes(topo::LinkId link) const { return carried(link, false); }
  /// ... of which another tenant's (traffic class Tenant).
  double link_foreign_bytes(topo::LinkId link) const { return carried(link, true); }
  /// Time the link has had at least one flow sending across it, up to now.
  TimeNs link_busy_ns(topo::LinkId link) const;

  /// Owners of GPUs (a shared cluster's jobs: owner_of_gpu[g] >= 0, or -1
  /// for none): a flow from GPU g is owner_of_gpu[g]'s from now on, and the
  /// network counts each owner's bytes on every link. Set before any flow.
  void set_gpu_owners(std::vector<int> owner_of_gpu);
  /// Bytes `owner`'s flows have carried across `link`, up to now (0 for an
  /// owner no GPU has).
  double link_owner_bytes(topo::LinkId link, int owner) const;
  /// Flows now sending (started and not yet past their last byte).
  std::size_t active_flows() const { return active_; }

  bool is_sending(FlowId id) const { return find(id) != nullptr; }
  /// Current max-min rate; 0 once the flow has finished sending.
  double flow_rate_Bps(FlowId id) const;
  /// Bytes still to send, as of now; 0 once finished.
  double flow_remaining_bytes(FlowId id) const;

  /// Called at the end of every busy period of a link (from its first flow
  /// starting to its last flow finishing): the trace's per-link tracks.
  using BusyObserver = std::function<void(topo::LinkId, TimeNs start_ns, TimeNs end_ns)>;
  void set_busy_observer(BusyObserver observer) { busy_observer_ = std::move(observer); }
  Kernel& kernel() const { return *kernel_; }
  const topo::Topology& topology() const { return *topology_; }
  const FlowNetworkStats& stats() const { return stats_; }

 private:
  struct Route {
    std::vector<topo::LinkId> links;
    TimeNs latency_ns = 0;
  };
  struct RouteKey {
    int src = 0;
    int dst = 0;
    std::uint64_t hash = 0;
    friend bool operator==(const RouteKey&, const RouteKey&) = default;
  };
  struct RouteKeyHash {
    std::size_t operator()(const RouteKey& k) const {
      const std::uint64_t pair =
          (static_cast<std::uint64_t>(static_cast<std::uint32_t>(k.src)) << 32) |
          static_cast<std::uint32_t>(k.dst);
      return std::hash<std::uint64_t>{}(pair ^ (k.hash * 0x9e3779b97f4a7c15ULL));
    }
  };
  struct Flow {
    std::span<const topo::LinkId> links;  // into routes_ (node-based: stable)
    std::vector<std::uint32_t> pos;       // index of this flow in links_[links[i]].flows
    std::function<void()> on_done;
    double remaining_bytes = 0;  // as of last_update_ns
    double rate_Bps = 0;
    TimeNs last_update_ns = 0;
    TimeNs finish_ns = kNever;
    TimeNs latency_ns = 0;
    std::uint64_t seq = 0;  // start order: ties in finish time retire in start order
    std::uint32_t generation = 1;
    std::uint32_t mark = 0;  // component-search epoch
    int local = -1;          // index in the max-min problem
    core::TrafficClass traffic = core::TrafficClass::Other;
    int owner = -1;  // set_gpu_owners' owner of its source GPU
    bool sending = false;
  };
  struct Link {
    double capacity_Bps = 0;
    std::vector<std::uint32_t> flows;  // slots of flows sending across it
    double bytes = 0;                  // carried, up to each flow's last update
    double foreign_bytes = 0;          // ... of it by class Tenant
    TimeNs busy_ns = 0;
    TimeNs busy_since_ns = 0;
    std::uint32_t mark = 0;
    int local = -1;
  };
  using FinishKey = std::tuple<TimeNs, std::uint64_t, std::uint32_t>;  // (finish, seq, slot)

  const Route& route(int gpu_src, int gpu_dst, std::uint64_t flow_hash);
  FlowId start_on(const Route& path, double bytes, std::function<void()> on_done,
                  core::TrafficClass traffic, int owner = -1);
  const Flow* find(FlowId id) const;
  std::uint32_t allocate_slot();
  void attach(std::uint32_t slot);  // adds the flow to its links' lists
  void detach(std::uint32_t slot);  // removes it, marking its links dirty
  void mark_dirty(topo::LinkId link);
  void advance(Flow& flow, TimeNs now);
  void carry(const Flow& flow, double bytes);                 // counts bytes sent on its links
  double carried(topo::LinkId link, bool tenant_only) const;  // up to now, flows in flight too
  void request_update();
  void on_update();
  void retire_finished(TimeNs now);
  void recompute(TimeNs now);
  void schedule_next();

  Kernel* kernel_;
  const topo::Topology* topology_;
  std::vector<Link> links_;
  std::unordered_map<RouteKey, Route, RouteKeyHash> routes_;
  core::TrafficWeights weights_;
  std::vector<Flow> flows_;  // by slot
  std::vector<std::uint32_t> free_slots_;
  std::set<FinishKey> finish_order_;
  std::vector<topo::LinkId> dirty_links_;
  std::vector<char> link_dirty_;
  EventHandle update_event_;
  TimeNs update_at_ns_ = kNever;
  std::uint32_t epoch_ = 0;
  std::uint64_t next_seq_ = 1;
  std::size_t active_ = 0;
  FlowNetworkStats stats_;
  // Scratch reused across recomputations.
  std::vector<topo::LinkId> stack_;
  std::vector<topo::LinkId> component_links_;
  std::vector<std::uint32_t> component_flows_;
  std::vector<int> local_links_;
  std::vector<double> rates_Bps_;
  MaxMinProblem problem_;
  MaxMinScratch scratch_;
  BusyObserver busy_observer_;
  std::vector<int> owner_of_gpu_;    // empty: no owners
  std::vector<double> owner_bytes_;  // [owner * links + link]
};

}  // namespace parashift::sim
