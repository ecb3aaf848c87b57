#include "tools/cli/campaign_svg.hpp"

#include <string>
#include <vector>

#include "tools/cli/format_number.hpp"
#include "tools/cli/svg_plot.hpp"

namespace parashift::tools {

namespace {

// A distribution from its best to its worst case: lost time, lost work and
// recovery grow to the right (min .. max); ETTR shrinks, so its lost share
// runs from the best seed (max ETTR) to the worst (min ETTR).
PlotSeries growing(const std::string& label, const sim::Percentiles& p) {
  return {label, {p.min, p.p10, p.p50, p.p90, p.p99, p.max}};
}

PlotSeries lost_share(const std::string& label, const sim::Percentiles& ettr) {
  auto pct = [](double e) { return 100 * (1 - e); };
  return {
      label,
      {pct(ettr.max), pct(ettr.p90), pct(ettr.p50), pct(ettr.p10), pct(ettr.p1), pct(ettr.min)}};
}

}  // namespace

void write_campaign_svg(std::ostream& out, const sim::CampaignResult& r, const std::string& title) {
  const std::string runs = std::to_string(r.seeds) + " seeds x " + fmt("%.4g", r.days) + " days";
  LinePlot lost;
  lost.title = title + ": time lost to failures (" + runs + ")";
  lost.x_label = "seeds, best to worst (ETTR max, p90, p50, p10, p1, min)";
  lost.y_label = "% of wall time (1 - ETTR)";
  lost.x_ticks = {"best", "p90", "p50", "p10", "p1", "worst"};
  lost.series = {lost_share(r.snapshot.name, r.snapshot.ettr),
                 lost_share(r.baseline.name, r.baseline.ettr)};
  const std::vector<std::string> ticks = {"min", "p10", "p50", "p90", "p99", "max"};
  LinePlot work;
  work.title = "lost work per interruption";
  work.x_label = "interruptions, by percentile";
  work.y_label = "seconds of training redone";
  work.x_ticks = ticks;
  work.series = {growing(r.snapshot.name, r.snapshot.lost_work_s),
                 growing(r.baseline.name, r.baseline.lost_work_s)};
  LinePlot recovery;
  recovery.title = "recovery time per interruption";
  recovery.x_label = "interruptions, by percentile";
  recovery.y_label = "seconds from failure to training";
  recovery.x_ticks = ticks;
  recovery.series = {growing(r.snapshot.name, r.snapshot.recovery_s),
                     growing(r.baseline.name, r.baseline.recovery_s)};
  write_svg_panels(out, {lost, work, recovery});
}

}  // namespace parashift::tools
