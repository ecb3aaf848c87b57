#include "sim/kernel.hpp"

#include "core/assert.hpp"

namespace parashift::sim {

EventHandle Kernel::schedule_at(TimeNs t_ns, Action action) {
  PARASHIFT_ASSERT(t_ns >= now_ns_, "event scheduled in the past: t_ns=", t_ns,
                   " now_ns=", now_ns_);
  const std::uint64_t seq = next_seq_++;
  if (state_.size() <= seq) state_.resize(seq + 1, false);
  state_[seq] = true;
  queue_.push(Entry{EventKey{t_ns, seq}, std::move(action)});
  ++live_;
  return EventHandle{seq};
}

void Kernel::cancel(EventHandle handle) {
  if (is_pending(handle)) {
    state_[handle.seq] = false;
    --live_;
  }
}

bool Kernel::is_pending(EventHandle handle) const {
  return handle.seq < state_.size() && state_[handle.seq];
}

bool Kernel::pop_cancelled_front() {
  while (!queue_.empty() && !state_[queue_.top().key.seq]) queue_.pop();
  return !queue_.empty();
}

bool Kernel::step() {
  if (!pop_cancelled_front()) return false;
  // priority_queue::top is const; the entry is moved out before pop.
  Entry entry = std::move(const_cast<Entry&>(queue_.top()));
  queue_.pop();
  state_[entry.key.seq] = false;
  --live_;
  now_ns_ = entry.key.t_ns;
  ++executed_;
  entry.action();
  return true;
}

void Kernel::run() {
  while (step()) {
  }
}

void Kernel::run_until(TimeNs t_ns) {
  while (pop_cancelled_front() && queue_.top().key.t_ns <= t_ns) step();
  if (t_ns > now_ns_) now_ns_ = t_ns;
}

}  // namespace parashift::sim
