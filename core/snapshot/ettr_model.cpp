#include "core/snapshot/ettr_model.hpp"

#include <algorithm>
#include <cmath>

#include "core/assert.hpp"

namespace parashift::core {

namespace {

void check(const CheckpointRestart& in) {
  PARASHIFT_ASSERT(in.rate_per_s >= 0 && in.interval_s > 0 && in.write_s >= 0 && in.restart_s >= 0);
}

}  // namespace

double kokolis_ettr(const CheckpointRestart& in) {
  check(in);
  const double first = (1.0 - in.rate_per_s * (in.restart_s + in.interval_s / 2.0)) /
                       (1.0 + in.write_s / in.interval_s);
  return std::clamp(first, 0.0, 1.0);
}

double renewal_ettr(const CheckpointRestart& in) {
  check(in);
  const double cycle_s = in.interval_s + in.write_s;
  if (in.rate_per_s == 0) return in.interval_s / cycle_s;
  // expm1 keeps the small-rate limit exact: lambda dt / expm1(lambda c) -> dt / c.
  return in.rate_per_s * in.interval_s * std::exp(-in.rate_per_s * in.restart_s) /
         std::expm1(in.rate_per_s * cycle_s);
}

}  // namespace parashift::core
