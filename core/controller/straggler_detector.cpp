#include "core/controller/straggler_detector.hpp"

#include <algorithm>
#include <sstream>

namespace parashift::core {

std::string StragglerFinding::subject() const {
  switch (kind) {
    case Kind::Gpu:
      return "gpu " + std::to_string(id);
    case Kind::Node:
      return "node " + std::to_string(id);
    case Kind::Link:
      return "link " + link;
  }
  return {};
}

std::string StragglerFinding::describe() const {
  std::ostringstream out;
  out.precision(3);
  out << subject() << ' ' << slowdown << "x slower";
  return out.str();
}

StragglerDetector::StragglerDetector(double threshold, int patience)
    : threshold_(threshold), clear_(0.5 * (1.0 + threshold)), patience_(patience) {}

bool StragglerDetector::update(Track& track, double ratio, std::int64_t iteration) const {
  track.ratio = ratio;
  if (!track.flagged) {
    track.over = ratio >= threshold_ ? track.over + 1 : 0;
    if (track.over < patience_) return false;
    track.flagged = true;
    track.under = 0;
    track.since = iteration;
    return true;
  }
  track.under = ratio < clear_ ? track.under + 1 : 0;
  if (track.under < patience_) return false;
  track.flagged = false;
  track.over = 0;
  return true;
}

std::vector<StragglerFinding> StragglerDetector::findings(const PolicyContext& context) const {
  std::vector<StragglerFinding> out;
  const int per_node = std::max(1, context.job.gpus_per_node);
  const int ranks = static_cast<int>(ranks_.size());
  for (int first = 0; first < ranks; first += per_node) {
    const int last = std::min(ranks, first + per_node);
    int flagged = 0;
    double least = 0;
    std::int64_t since = 0;
    for (int r = first; r < last; ++r) {
      const Track& t = ranks_[static_cast<std::size_t>(r)];
      if (!t.flagged) continue;
      least = flagged ? std::min(least, t.ratio) : t.ratio;
      since = flagged ? std::min(since, t.since) : t.since;
      ++flagged;
    }
    if (flagged == 0) continue;
    if (flagged == last - first && per_node > 1) {
      out.push_back({StragglerFinding::Kind::Node, first / per_node, {}, least, since});
      continue;
    }
    for (int r = first; r < last; ++r) {
      const Track& t = ranks_[static_cast<std::size_t>(r)];
      if (t.flagged) out.push_back({StragglerFinding::Kind::Gpu, r, {}, t.ratio, t.since});
    }
  }
  // A degraded cable also slows every link its flows cross downstream, by
  // less; report the worst ones (within 20% of the largest slowdown), not
  // every link the slow flows touch.
  const auto& links = context.state.links();
  double worst = 0;
  for (const Track& t : links_) {
    if (t.flagged) worst = std::max(worst, t.ratio);
  }
  for (std::size_t i = 0; i < links_.size(); ++i) {
    const Track& t = links_[i];
    if (t.flagged && t.ratio >= 0.8 * worst) {
      out.push_back({StragglerFinding::Kind::Link, 0, links[i].name, t.ratio, t.since});
    }
  }
  return out;
}

void StragglerDetector::run(PolicyContext& context) {
  const StateEstimate& state = context.state;
  if (!state.ready()) return;
  if (ranks_.empty()) ranks_.resize(static_cast<std::size_t>(state.ranks()));
  bool changed = false;
  const double median = state.median_layer_ns();
  if (median > 0) {
    const auto& u = state.layer_ns();
    for (std::size_t r = 0; r < ranks_.size(); ++r) {
      changed |= update(ranks_[r], u[r] / median, context.iteration);
    }
  }
  // Links are judged only from a backend that measures them: without
  // telemetry an empty or stale list says nothing about a link's rate.
  static const std::vector<StateEstimate::LinkRate> none;
  const auto& links = context.capabilities.link_telemetry ? state.links() : none;
  links_.resize(links.size());
  best_link_Bps_.resize(links.size(), 0.0);
  for (std::size_t i = 0; i < links.size(); ++i) {
    const double rate = links[i].rate_Bps;
    if (rate <= 0) continue;  // idle this window: no evidence either way
    best_link_Bps_[i] = std::max(best_link_Bps_[i], rate);
    changed |= update(links_[i], best_link_Bps_[i] / rate, context.iteration);
  }
  if (!changed) return;
  // Log what appeared and what cleared, then publish the current findings.
  auto now = findings(context);
  for (const auto& f : now) {
    const bool known = std::any_of(context.stragglers.begin(), context.stragglers.end(),
                                   [&](const StragglerFinding& o) { return o.same_subject(f); });
    if (!known)
      context.log.push_back({context.iteration, "straggler", f.describe(), {}, false, 0, 0});
  }
  for (const auto& f : context.stragglers) {
    const bool still = std::any_of(now.begin(), now.end(),
                                   [&](const StragglerFinding& o) { return o.same_subject(f); });
    if (!still) {
      context.log.push_back(
          {context.iteration, "straggler", f.subject() + " recovered", {}, false, 0, 0});
    }
  }
  context.stragglers = std::move(now);
}

}  // namespace parashift::core
