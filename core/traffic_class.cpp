#include "core/traffic_class.hpp"

#include <cmath>
#include <sstream>

#include "core/scenario/yaml_fields.hpp"

namespace parashift::core {

namespace {
constexpr std::array<const char*, kTrafficClasses> kNames{
    "grad_sync", "pipeline", "param_gather", "snapshot", "data", "tenant", "other"};
}

const char* to_string(TrafficClass c) {
  return kNames[static_cast<std::size_t>(c)];
}

bool TrafficWeights::is_default() const {
  return *this == TrafficWeights{};
}

std::string TrafficWeights::describe() const {
  std::ostringstream out;
  for (std::size_t c = 0; c < kTrafficClasses; ++c) {
    if (weight[c] == 1) continue;
    if (out.tellp() > 0) out << ", ";
    out << kNames[c] << ' ' << weight[c];
  }
  return out.str();
}

TrafficWeights read_traffic_weights(YamlFields& f) {
  TrafficWeights w;
  for (std::size_t c = 0; c < kTrafficClasses; ++c) {
    if (!f.has(kNames[c])) {
      f.allow(kNames[c]);
      continue;
    }
    const std::string& raw = f.node()[kNames[c]].IsScalar() ? f.node()[kNames[c]].Scalar() : "";
    const double v = f.positive_double(kNames[c]);
    if (!std::isfinite(v) || v < kMinTrafficWeight || v > kMaxTrafficWeight) {
      f.fail(kNames[c], "expected a weight in [0.001, 1000], found '" + raw + "'");
    }
    w.weight[c] = v;
  }
  f.reject_unknown();
  return w;
}

}  // namespace parashift::core
