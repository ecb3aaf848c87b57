#include "sim/trace.hpp"

#include <cstdio>
#include <set>

#include <nlohmann/json.hpp>

namespace parashift::sim {

namespace {

// Trace timestamps are microseconds; keep nanosecond precision as decimals.
std::string micros(TimeNs t_ns) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(t_ns / 1000),
                static_cast<long long>(t_ns % 1000));
  return buf;
}

}  // namespace

void TraceRecorder::pass(int worker, const PassOp& op, TimeNs start_ns, TimeNs duration_ns) {
  std::string name = op.kind == core::PassKind::Forward    ? "F"
                     : op.kind == core::PassKind::Backward ? "B"
                                                           : "W";
  name += std::to_string(op.micro_batch);
  if (op.chunk > 0) name += "." + std::to_string(op.chunk);
  events_.push_back({1, worker, std::move(name), start_ns, duration_ns});
}

void TraceRecorder::collective(int group, TimeNs start_ns, TimeNs duration_ns) {
  events_.push_back({2, group, "grad sync", start_ns, duration_ns});
}

void TraceRecorder::link_busy(int link, TimeNs start_ns, TimeNs end_ns) {
  events_.push_back({3, link, "busy", start_ns, end_ns - start_ns});
}

void TraceRecorder::write(std::ostream& out, const std::vector<std::string>& worker_names,
                          const std::vector<std::string>& group_names,
                          const std::vector<std::string>& link_names) const {
  // Streamed by hand: a 16K-GPU trace has millions of events.
  out << "{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n";
  bool first = true;
  auto meta = [&](int pid, int tid, const char* what, const std::string& name) {
    out << (first ? "" : ",\n") << "{\"ph\":\"M\",\"pid\":" << pid << ",\"tid\":" << tid
        << ",\"name\":\"" << what << "\",\"args\":{\"name\":" << nlohmann::json(name).dump()
        << "}}";
    first = false;
  };
  meta(1, 0, "process_name", "ranks (tensor-parallel groups)");
  meta(2, 0, "process_name", "data-parallel gradient sync");
  meta(3, 0, "process_name", "links");
  std::set<std::pair<int, int>> named;
  for (const Event& e : events_) {
    if (!named.insert({e.pid, e.tid}).second) continue;
    const auto& names = e.pid == 1 ? worker_names : e.pid == 2 ? group_names : link_names;
    meta(e.pid, e.tid, "thread_name",
         e.tid < static_cast<int>(names.size()) ? names[e.tid] : std::to_string(e.tid));
  }
  for (const Event& e : events_) {
    out << ",\n{\"ph\":\"X\",\"pid\":" << e.pid << ",\"tid\":" << e.tid << ",\"name\":\"" << e.name
        << "\",\"ts\":" << micros(e.start_ns) << ",\"dur\":" << micros(e.duration_ns) << "}";
  }
  out << "\n]}\n";
}

}  // namespace parashift::sim
