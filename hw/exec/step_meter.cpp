// HwBackend's step report: every rank's counters (step_counters.hpp),
// gathered so that every rank builds the same report, as typed fields.
#include <algorithm>
#include <array>
#include <string>

#include "core/rank_layout.hpp"
#include "hw/exec/hw_backend.hpp"
#include "hw/exec/step_counters.hpp"

namespace parashift::hw {

namespace {

// One rank's numbers as gathered: named fields, packed in this order.
struct RankMeasure {
  double compute_ns = 0, optimizer_ns = 0, tp_ns = 0, pp_ns = 0, dp_ns = 0;
  double tp_bytes = 0, pp_bytes = 0, dp_bytes = 0;
  double peak_bytes = 0, wall_ns = 0;

  std::vector<double> pack() const;
  static RankMeasure unpack(const double* values);
};

constexpr std::array<double RankMeasure::*, 10> kFields{
    &RankMeasure::compute_ns, &RankMeasure::optimizer_ns, &RankMeasure::tp_ns,
    &RankMeasure::pp_ns,      &RankMeasure::dp_ns,        &RankMeasure::tp_bytes,
    &RankMeasure::pp_bytes,   &RankMeasure::dp_bytes,     &RankMeasure::peak_bytes,
    &RankMeasure::wall_ns};

std::vector<double> RankMeasure::pack() const {
  std::vector<double> out;
  for (auto field : kFields) out.push_back(this->*field);
  return out;
}

RankMeasure RankMeasure::unpack(const double* values) {
  RankMeasure m;
  for (std::size_t i = 0; i < kFields.size(); ++i) m.*kFields[i] = values[i];
  return m;
}

}  // namespace

core::StepReport HwBackend::make_report(const Counters& c) const {
  // Peak memory: weights, gradients and Adam's moments (shards under the
  // distributed optimizer), the layers' shared workspace, and the most the
  // micro-batches in flight held at once (stashes, ZB-H1's output gradients).
  double persistent_bytes = 0;
  for (const auto& [index, slot] : layers_)
    for (const DeviceLayerTensors* set : {&slot.weights, &slot.grads, &slot.state.m, &slot.state.v})
      for (const DeviceBuffer* b : set->all())
        persistent_bytes += static_cast<double>(b->size()) * sizeof(float);
  RankMeasure mine;
  mine.compute_ns = static_cast<double>(c.compute_ns);
  mine.optimizer_ns = static_cast<double>(c.optimizer_ns);
  mine.tp_ns = static_cast<double>(c.tp_ns);
  mine.pp_ns = static_cast<double>(c.pp_ns);
  mine.dp_ns = static_cast<double>(c.dp_ns);
  mine.tp_bytes = c.tp_bytes;
  mine.pp_bytes = c.pp_bytes;
  mine.dp_bytes = c.dp_bytes;
  mine.peak_bytes =
      persistent_bytes + static_cast<double>(workspace_->bytes()) + c.peak_stash_bytes;
  mine.wall_ns = static_cast<double>(c.wall_ns);
  std::vector<double> packed = mine.pack();
  const std::vector<double> edges = pack_edges();  // under virtual time: each outgoing link's use
  packed.insert(packed.end(), edges.begin(), edges.end());
  const std::vector<double> all = world_.all_gather(packed);
  const int ranks = world_.size();
  std::vector<RankMeasure> m;
  for (int rank = 0; rank < ranks; ++rank)
    m.push_back(RankMeasure::unpack(all.data() + static_cast<std::size_t>(rank) * packed.size()));
  core::StepReport r;
  r.iteration = iteration_;
  const core::RankLayout layout(plan_);
  for (const RankMeasure& x : m) {
    r.iteration_ns = std::max(r.iteration_ns, static_cast<core::TimeNs>(x.wall_ns));
    r.rank_compute_ns.push_back(static_cast<core::TimeNs>(x.compute_ns));
    if (options_.compute_clock != ComputeClock::Counted)
      r.rank_optimizer_ns.push_back(static_cast<core::TimeNs>(x.optimizer_ns));
    r.rank_exposed_comm_ns.push_back(static_cast<core::TimeNs>(x.tp_ns + x.pp_ns + x.dp_ns));
    r.rank_peak_memory_bytes.push_back(x.peak_bytes);
  }
  r.links = links_of(all, packed.size(), kFields.size(), r.iteration_ns);
  // One entry per group, what it spent communicating, as the simulator
  // reports a group's busy time. A collective's members each wait inside
  // the call for the last to arrive, so the least member's time is the
  // collective's own (the last arrival waits for nobody); a pipeline's sends
  // block on the peer's compute too, so its slowest member's time stands.
  // Bytes per member for collectives (nccl-tests' per-rank buffer), summed
  // for send/recv.
  auto add_group = [&](const std::string& name, const char* kind, double RankMeasure::*time,
                       double RankMeasure::*bytes, bool send_recv, auto member_of, int members) {
    core::GroupComm g{name, kind, 0, 0};
    for (int k = 0; k < members; ++k) {
      const RankMeasure& x = m[static_cast<std::size_t>(member_of(k))];
      const auto t = static_cast<core::TimeNs>(x.*time);
      g.busy_ns = k == 0 ? t : send_recv ? std::max(g.busy_ns, t) : std::min(g.busy_ns, t);
      g.bytes = send_recv ? g.bytes + x.*bytes : m[static_cast<std::size_t>(member_of(0))].*bytes;
    }
    r.comm.push_back(g);
  };
  for (int s = 0; s < plan_.pp; ++s)
    for (int d = 0; d < plan_.dp && plan_.tp > 1; ++d)
      add_group(
          "tp[stage " + std::to_string(s) + ", replica " + std::to_string(d) + "]",
          shape_.sequence_parallel ? "all_gather+reduce_scatter" : "all_reduce",
          &RankMeasure::tp_ns, &RankMeasure::tp_bytes, false,
          [&](int t) {
            return layout.rank({t, 0, d, s});
          },
          plan_.tp);
  for (int d = 0; d < plan_.dp && plan_.pp > 1; ++d)
    for (int t = 0; t < plan_.tp; ++t)
      add_group(
          "pp[replica " + std::to_string(d) + ", tp " + std::to_string(t) + "]", "send_recv",
          &RankMeasure::pp_ns, &RankMeasure::pp_bytes, true,
          [&](int s) {
            return layout.rank({t, 0, d, s});
          },
          plan_.pp);
  for (int s = 0; s < plan_.pp && plan_.dp > 1; ++s)
    for (int t = 0; t < plan_.tp; ++t)
      add_group(
          "dp[stage " + std::to_string(s) + ", tp " + std::to_string(t) + "]",
          sharded_optimizer() ? "reduce_scatter+all_gather" : "all_reduce", &RankMeasure::dp_ns,
          &RankMeasure::dp_bytes, false,
          [&](int d) {
            return layout.rank({t, 0, d, s});
          },
          plan_.dp);
  return r;
}

}  // namespace parashift::hw
