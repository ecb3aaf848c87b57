// The discrete-event kernel. It owns the clock: events are closures keyed by
// (time, insertion sequence), so same-time events run in the order they were
// scheduled, and runs are deterministic. Cancelling marks an event; the
// kernel skips it when it reaches the front (ns-3's scheme).
#pragma once

#include <cstdint>
#include <functional>
#include <queue>
#include <vector>

#include "core/units.hpp"

namespace parashift::sim {

using core::TimeNs;

struct EventKey {
  TimeNs t_ns = 0;
  std::uint64_t seq = 0;
  friend bool operator<(const EventKey& a, const EventKey& b) {
    return a.t_ns != b.t_ns ? a.t_ns < b.t_ns : a.seq < b.seq;
  }
};

/// Identifies a scheduled event so it can be cancelled.
struct EventHandle {
  std::uint64_t seq = 0;
  bool valid() const { return seq != 0; }
};

class Kernel {
 public:
  using Action = std::function<void()>;

  TimeNs now() const { return now_ns_; }
  /// Schedules `action` at absolute time `t_ns` (>= now()).
  EventHandle schedule_at(TimeNs t_ns, Action action);
  EventHandle schedule_in(TimeNs delay_ns, Action action) {
    return schedule_at(now_ns_ + delay_ns, std::move(action));
  }
  /// Cancels a pending event; a no-op for one that already ran or was cancelled.
  void cancel(EventHandle handle);
  bool is_pending(EventHandle handle) const;

  /// Runs the next live event; false when none is left.
  bool step();
  /// Runs until no event is left.
  void run();
  /// Runs every event with time <= `t_ns`, then sets the clock to `t_ns`.
  void run_until(TimeNs t_ns);

  std::size_t pending() const { return live_; }
  std::uint64_t executed() const { return executed_; }

 private:
  struct Entry {
    EventKey key;
    Action action;
  };
  struct Later {
    bool operator()(const Entry& a, const Entry& b) const { return b.key < a.key; }
  };
  bool pop_cancelled_front();

  std::priority_queue<Entry, std::vector<Entry>, Later> queue_;
  std::vector<bool> state_;  // by seq: true while pending
  TimeNs now_ns_ = 0;
  std::uint64_t next_seq_ = 1;
  std::size_t live_ = 0;
  std::uint64_t executed_ = 0;
};

}  // namespace parashift::sim
