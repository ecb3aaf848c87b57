// A Chrome / Perfetto trace of one simulated iteration (the JSON "Trace
// Event Format" that ui.perfetto.dev and chrome://tracing open): one track
// per simulated rank (a tensor-parallel group) with its passes, one per
// data-parallel group with its gradient collectives, one per busy link.
#pragma once

#include <ostream>
#include <string>
#include <vector>

#include "core/pipeline_schedule.hpp"
#include "core/units.hpp"

namespace parashift::sim {

using core::PassOp;
using core::TimeNs;

class TraceRecorder {
 public:
  /// A forward or backward pass of worker `worker` (see IterationResult::workers).
  void pass(int worker, const PassOp& op, TimeNs start_ns, TimeNs duration_ns);
  /// A data-parallel gradient collective of group `group` (cp_rank + cp * stage).
  void collective(int group, TimeNs start_ns, TimeNs duration_ns);
  /// A busy period of a link.
  void link_busy(int link, TimeNs start_ns, TimeNs end_ns);

  /// Writes the trace; `worker_names`, `group_names`, `link_names` label the tracks.
  void write(std::ostream& out, const std::vector<std::string>& worker_names,
             const std::vector<std::string>& group_names,
             const std::vector<std::string>& link_names) const;
  std::size_t size() const { return events_.size(); }

  struct Event {
    int pid = 0;       // 1 ranks, 2 data-parallel groups, 3 links
    int tid = 0;       // the worker, group or link
    std::string name;  // "F3", "B3.1", "W0" (pass, micro-batch, chunk), "grad sync", "busy"
    TimeNs start_ns = 0;
    TimeNs duration_ns = 0;
  };
  static constexpr int kWorkerTrack = 1, kGroupTrack = 2, kLinkTrack = 3;
  /// In the order recorded.
  const std::vector<Event>& events() const { return events_; }

 private:
  std::vector<Event> events_;
};

}  // namespace parashift::sim
