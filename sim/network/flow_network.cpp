#include "sim/network/flow_network.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include "core/assert.hpp"

namespace parashift::sim {
namespace {

constexpr std::uint64_t kSlotMask = 0xffff'ffffULL;

// ns to send `remaining_bytes` at `rate_Bps`: rounded up to whole ns, except
// that a value within floating noise of an integer is taken as that integer
// (1e9 B at 50 GB/s is 2e7 ns, not 2e7 + 1 because 1e9 / 50e9 is inexact).
TimeNs send_ns(double remaining_bytes, double rate_Bps) {
  if (remaining_bytes < FlowNetwork::kDoneBytes) return 0;
  if (rate_Bps <= 0) return FlowNetwork::kNever;
  const double t_ns = remaining_bytes / rate_Bps * 1e9;
  if (t_ns >= 4e18) return FlowNetwork::kNever;
  const double nearest = std::nearbyint(t_ns);
  if (std::abs(t_ns - nearest) <= std::max(1e-6, t_ns * 1e-12)) {
    return static_cast<TimeNs>(nearest);
  }
  return static_cast<TimeNs>(std::ceil(t_ns));
}

// Bytes a flow sends in `elapsed_ns` at `rate_Bps`, capped at what is left.
double sent_bytes(double remaining_bytes, double rate_Bps, TimeNs elapsed_ns) {
  if (elapsed_ns <= 0 || rate_Bps <= 0) return 0;
  return std::min(remaining_bytes, rate_Bps * core::ns_to_s(elapsed_ns));
}

}  // namespace

FlowNetwork::FlowNetwork(Kernel& kernel, const topo::Topology& topology)
    : kernel_(&kernel), topology_(&topology) {
  links_.resize(static_cast<std::size_t>(topology.link_count()));
  link_dirty_.assign(links_.size(), 0);
  for (std::size_t l = 0; l < links_.size(); ++l) {
    links_[l].capacity_Bps = topology.link(static_cast<topo::LinkId>(l)).bandwidth_Bps;
  }
}

FlowNetwork::~FlowNetwork() {
  kernel_->cancel(update_event_);
}

FlowId FlowNetwork::start_flow(int gpu_src, int gpu_dst, double bytes,
                               std::function<void()> on_done, std::uint64_t flow_hash,
                               core::TrafficClass traffic) {
  const int gpus = topology_->gpu_count();
  if (gpu_src < 0 || gpu_src >= gpus || gpu_dst < 0 || gpu_dst >= gpus) {
    throw std::invalid_argument("FlowNetwork::start_flow: GPUs " + std::to_string(gpu_src) +
                                " -> " + std::to_string(gpu_dst) + ": expected indices in [0, " +
                                std::to_string(gpus) + ")");
  }
  ++stats_.flows_started;
  if (gpu_src == gpu_dst || bytes <= 0) {
    ++stats_.flows_finished;
    const TimeNs latency_ns =
        gpu_src == gpu_dst ? 0 : route(gpu_src, gpu_dst, flow_hash).latency_ns;
    if (on_done) kernel_->schedule_in(latency_ns, std::move(on_done));
    return FlowId{};
  }
  const int owner = static_cast<std::size_t>(gpu_src) < owner_of_gpu_.size()
                        ? owner_of_gpu_[static_cast<std::size_t>(gpu_src)]
                        : -1;
  return start_on(route(gpu_src, gpu_dst, flow_hash), bytes, std::move(on_done), traffic, owner);
}

FlowId FlowNetwork::start_link_flow(topo::LinkId link, double bytes, std::function<void()> on_done,
                                    core::TrafficClass traffic) {
  if (link < 0 || static_cast<std::size_t>(link) >= links_.size() || !(bytes > 0)) {
    throw std::invalid_argument("FlowNetwork::start_link_flow: link " + std::to_string(link) +
                                ", " + std::to_string(bytes) +
                                " B: expected a link id of the topology and bytes > 0");
  }
  ++stats_.flows_started;
  // A one-link route, cached under a source no GPU has.
  auto [it, added] = routes_.try_emplace(RouteKey{-1 - link, -1, 0});
  if (added) {
    it->second.links = {link};
    it->second.latency_ns = topology_->link(link).latency_ns;
  }
  return start_on(it->second, bytes, std::move(on_done), traffic);
}

void FlowNetwork::set_class_weights(const core::TrafficWeights& weights) {
  if (weights == weights_) return;
  weights_ = weights;
  for (std::size_t l = 0; l < links_.size(); ++l) {
    if (!links_[l].flows.empty()) mark_dirty(static_cast<topo::LinkId>(l));
  }
  request_update();
}

FlowId FlowNetwork::start_on(const Route& path, double bytes, std::function<void()> on_done,
                             core::TrafficClass traffic, int owner) {
  const std::uint32_t slot = allocate_slot();
  Flow& f = flows_[slot];
  f.links = path.links;
  f.on_done = std::move(on_done);
  f.remaining_bytes = bytes;
  f.rate_Bps = 0;
  f.last_update_ns = kernel_->now();
  f.finish_ns = kNever;
  f.latency_ns = path.latency_ns;
  f.seq = next_seq_++;
  f.traffic = traffic;
  f.owner = owner;
  f.sending = true;
  attach(slot);
  ++active_;
  request_update();
  return FlowId{(static_cast<std::uint64_t>(f.generation) << 32) | slot};
}

void FlowNetwork::set_link_bandwidth(topo::LinkId link, double bandwidth_Bps) {
  if (link < 0 || static_cast<std::size_t>(link) >= links_.size() || !(bandwidth_Bps >= 0)) {
    throw std::invalid_argument("FlowNetwork::set_link_bandwidth: link " + std::to_string(link) +
                                ", " + std::to_string(bandwidth_Bps) +
                                " B/s: expected a link id of the topology and a rate >= 0");
  }
  links_[link].capacity_Bps = bandwidth_Bps;
  if (!links_[link].flows.empty()) {
    mark_dirty(link);
    request_update();
  }
}

double FlowNetwork::carried(topo::LinkId link, bool tenant_only) const {
  const Link& l = links_[link];
  double bytes = tenant_only ? l.foreign_bytes : l.bytes;
  for (const std::uint32_t slot : l.flows) {
    const Flow& f = flows_[slot];
    if (!tenant_only || f.traffic == core::TrafficClass::Tenant)
      bytes += sent_bytes(f.remaining_bytes, f.rate_Bps, kernel_->now() - f.last_update_ns);
  }
  return bytes;
}

void FlowNetwork::carry(const Flow& flow, double bytes) {
  const bool foreign = flow.traffic == core::TrafficClass::Tenant;
  double* owned = flow.owner < 0
                      ? nullptr
                      : &owner_bytes_[static_cast<std::size_t>(flow.owner) * links_.size()];
  for (const topo::LinkId l : flow.links) {
    links_[l].bytes += bytes;
    if (foreign) links_[l].foreign_bytes += bytes;
    if (owned != nullptr) owned[l] += bytes;
  }
}

void FlowNetwork::set_gpu_owners(std::vector<int> owner_of_gpu) {
  PARASHIFT_ASSERT(active_ == 0, "GPU owners are set before any flow");
  int owners = 0;
  for (const int o : owner_of_gpu) owners = std::max(owners, o + 1);
  owner_of_gpu_ = std::move(owner_of_gpu);
  owner_bytes_.assign(static_cast<std::size_t>(owners) * links_.size(), 0.0);
}

double FlowNetwork::link_owner_bytes(topo::LinkId link, int owner) const {
  const std::size_t links = links_.size();
  if (owner < 0 || (static_cast<std::size_t>(owner) + 1) * links > owner_bytes_.size()) return 0;
  double bytes = owner_bytes_[static_cast<std::size_t>(owner) * links + link];
  for (const std::uint32_t slot : links_[link].flows) {
    const Flow& f = flows_[slot];
    if (f.owner == owner)
      bytes += sent_bytes(f.remaining_bytes, f.rate_Bps, kernel_->now() - f.last_update_ns);
  }
  return bytes;
}

TimeNs FlowNetwork::link_busy_ns(topo::LinkId link) const {
  const Link& l = links_[link];
  return l.busy_ns + (l.flows.empty() ? 0 : kernel_->now() - l.busy_since_ns);
}

const FlowNetwork::Route& FlowNetwork::route(int gpu_src, int gpu_dst, std::uint64_t flow_hash) {
  const RouteKey key{gpu_src, gpu_dst, flow_hash};
  if (auto it = routes_.find(key); it != routes_.end()) return it->second;
  Route r;
  r.links = topology_->route(gpu_src, gpu_dst, flow_hash);
  for (const topo::LinkId l : r.links) r.latency_ns += topology_->link(l).latency_ns;
  return routes_.emplace(key, std::move(r)).first->second;
}

const FlowNetwork::Flow* FlowNetwork::find(FlowId id) const {
  const std::uint64_t slot = id.value & kSlotMask;
  if (!id.valid() || slot >= flows_.size()) return nullptr;
  const Flow& f = flows_[slot];
  return f.sending && f.generation == (id.value >> 32) ? &f : nullptr;
}

double FlowNetwork::flow_rate_Bps(FlowId id) const {
  const Flow* f = find(id);
  return f ? f->rate_Bps : 0.0;
}

double FlowNetwork::flow_remaining_bytes(FlowId id) const {
  const Flow* f = find(id);
  if (!f) return 0.0;
  return f->remaining_bytes -
         sent_bytes(f->remaining_bytes, f->rate_Bps, kernel_->now() - f->last_update_ns);
}

std::uint32_t FlowNetwork::allocate_slot() {
  if (!free_slots_.empty()) {
    const std::uint32_t slot = free_slots_.back();
    free_slots_.pop_back();
    return slot;
  }
  PARASHIFT_ASSERT(flows_.size() < kSlotMask, "too many concurrent flows: ", flows_.size());
  flows_.emplace_back();
  return static_cast<std::uint32_t>(flows_.size() - 1);
}

void FlowNetwork::attach(std::uint32_t slot) {
  Flow& f = flows_[slot];
  f.pos.clear();
  for (const topo::LinkId id : f.links) {
    Link& l = links_[id];
    if (l.flows.empty()) l.busy_since_ns = kernel_->now();
    f.pos.push_back(static_cast<std::uint32_t>(l.flows.size()));
    l.flows.push_back(slot);
    mark_dirty(id);
  }
}

void FlowNetwork::detach(std::uint32_t slot) {
  const Flow& f = flows_[slot];
  for (std::size_t i = 0; i < f.links.size(); ++i) {
    const topo::LinkId id = f.links[i];
    Link& l = links_[id];
    const std::uint32_t at = f.pos[i];
    PARASHIFT_ASSERT(l.flows[at] == slot);
    const std::uint32_t moved = l.flows.back();
    l.flows[at] = moved;
    l.flows.pop_back();
    if (moved != slot) {
      Flow& g = flows_[moved];
      for (std::size_t j = 0; j < g.links.size(); ++j) {
        if (g.links[j] == id) g.pos[j] = at;
      }
    }
    if (l.flows.empty()) {
      l.busy_ns += kernel_->now() - l.busy_since_ns;
      if (busy_observer_) busy_observer_(id, l.busy_since_ns, kernel_->now());
    }
    mark_dirty(id);
  }
}

void FlowNetwork::mark_dirty(topo::LinkId link) {
  if (!link_dirty_[link]) {
    link_dirty_[link] = 1;
    dirty_links_.push_back(link);
  }
}

void FlowNetwork::advance(Flow& flow, TimeNs now) {
  const double sent = sent_bytes(flow.remaining_bytes, flow.rate_Bps, now - flow.last_update_ns);
  if (sent > 0) {
    flow.remaining_bytes -= sent;
    carry(flow, sent);
  }
  flow.last_update_ns = now;
}

void FlowNetwork::request_update() {
  const TimeNs now = kernel_->now();
  if (update_at_ns_ == now && kernel_->is_pending(update_event_)) return;
  kernel_->cancel(update_event_);
  update_event_ = kernel_->schedule_at(now, [this] { on_update(); });
  update_at_ns_ = now;
}

void FlowNetwork::on_update() {
  update_event_ = {};
  update_at_ns_ = kNever;
  ++stats_.updates;
  const TimeNs now = kernel_->now();
  retire_finished(now);
  if (!dirty_links_.empty()) recompute(now);
  schedule_next();
}

void FlowNetwork::retire_finished(TimeNs now) {
  while (!finish_order_.empty() && std::get<0>(*finish_order_.begin()) <= now) {
    const std::uint32_t slot = std::get<2>(*finish_order_.begin());
    finish_order_.erase(finish_order_.begin());
    Flow& f = flows_[slot];
    // The flow finishes exactly now: whatever is left (at most rounding
    // noise beyond rate x elapsed) is delivered.
    carry(f, f.remaining_bytes);
    detach(slot);
    f.remaining_bytes = 0;
    f.rate_Bps = 0;
    f.finish_ns = kNever;
    f.sending = false;
    f.links = {};
    ++f.generation;
    --active_;
    ++stats_.flows_finished;
    if (f.on_done) kernel_->schedule_at(now + f.latency_ns, std::move(f.on_done));
    f.on_done = nullptr;
    free_slots_.push_back(slot);
  }
}

void FlowNetwork::recompute(TimeNs now) {
  // 1. The connected components touching a dirty link: links <-> flows.
  ++epoch_;
  component_links_.clear();
  component_flows_.clear();
  stack_.clear();
  for (const topo::LinkId l : dirty_links_) {
    link_dirty_[l] = 0;
    stack_.push_back(l);
  }
  dirty_links_.clear();
  while (!stack_.empty()) {
    const topo::LinkId id = stack_.back();
    stack_.pop_back();
    Link& l = links_[id];
    if (l.mark == epoch_) continue;
    l.mark = epoch_;
    component_links_.push_back(id);
    for (const std::uint32_t slot : l.flows) {
      Flow& f = flows_[slot];
      if (f.mark == epoch_) continue;
      f.mark = epoch_;
      component_flows_.push_back(slot);
      for (const topo::LinkId m : f.links) {
        if (links_[m].mark != epoch_) stack_.push_back(m);
      }
    }
  }
  if (component_flows_.empty()) return;
  ++stats_.recomputations;
  stats_.flows_rerated += component_flows_.size();

  // 2. The max-min problem of the component.
  problem_.clear();
  for (const topo::LinkId id : component_links_) {
    Link& l = links_[id];
    l.local = l.flows.empty() ? -1 : problem_.add_link(l.capacity_Bps);
  }
  for (const std::uint32_t slot : component_flows_) {
    Flow& f = flows_[slot];
    local_links_.clear();
    for (const topo::LinkId m : f.links) local_links_.push_back(links_[m].local);
    f.local = problem_.add_flow(local_links_, weights_.of(f.traffic));
  }

  // 3. Solve, then re-time every flow whose rate changed: bring its bytes up
  // to now at the old rate first. A flow whose rate is unchanged keeps its
  // last update and finish time (no rounding is re-applied).
  solve_max_min(problem_, rates_Bps_, scratch_);
  for (const std::uint32_t slot : component_flows_) {
    Flow& f = flows_[slot];
    const double rate_Bps = rates_Bps_[f.local];
    if (rate_Bps == f.rate_Bps) continue;
    advance(f, now);
    if (f.finish_ns != kNever) finish_order_.erase(FinishKey{f.finish_ns, f.seq, slot});
    f.rate_Bps = rate_Bps;
    const TimeNs left_ns = send_ns(f.remaining_bytes, f.rate_Bps);
    f.finish_ns = left_ns == kNever ? kNever : now + left_ns;
    if (f.finish_ns != kNever) finish_order_.insert(FinishKey{f.finish_ns, f.seq, slot});
  }
}

void FlowNetwork::schedule_next() {
  if (finish_order_.empty()) return;
  const TimeNs next_ns = std::get<0>(*finish_order_.begin());
  if (update_at_ns_ == next_ns && kernel_->is_pending(update_event_)) return;
  kernel_->cancel(update_event_);
  update_event_ = kernel_->schedule_at(next_ns, [this] { on_update(); });
  update_at_ns_ = next_ns;
}

}  // namespace parashift::sim
