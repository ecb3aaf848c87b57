#include "tools/cli/svg_timeline.hpp"

#include <algorithm>

#include "tools/cli/format_number.hpp"
#include "tools/cli/svg_plot.hpp"

namespace parashift::tools {

namespace {

constexpr double kWidth = 1200, kLeft = 190, kRight = 20, kTop = 50;
constexpr double kRowHeight = 26, kRowGap = 6, kAxisHeight = 40, kLegendHeight = 30;
constexpr int kTicks = 10;
constexpr const char* kIdle = "#eeeeee";
constexpr double kMinLabelWidth = 14;  // px a bar needs for its label

std::string num(double v) {
  return fmt("%.2f", v);
}

// Tick labels in the unit the axis end reads best in.
std::string time_label(double t_s, double axis_end_s) {
  if (axis_end_s >= 10) return fmt("%.4g", t_s) + " s";
  if (axis_end_s >= 0.01) return fmt("%.4g", t_s * 1e3) + " ms";
  return fmt("%.4g", t_s * 1e6) + " us";
}

}  // namespace

void write_timeline_svg(std::ostream& out, const Timeline& timeline) {
  const double axis_end_s = nice_ceiling(timeline.end_s, kTicks);
  const double plot_width = kWidth - kLeft - kRight;
  const auto rows = static_cast<double>(timeline.rows.size());
  const double rows_height = rows * (kRowHeight + kRowGap);
  const double height = kTop + rows_height + kAxisHeight + kLegendHeight;
  auto x_of = [&](double t_s) { return kLeft + plot_width * t_s / axis_end_s; };

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\""
      << num(height) << "\" viewBox=\"0 0 " << kWidth << " " << num(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << num(kWidth / 2) << "\" y=\"25\" text-anchor=\"middle\" font-size=\"15\">"
      << xml_escape(timeline.title) << "</text>\n";
  // Vertical grid lines and the time axis.
  const double axis_y = kTop + rows_height;
  for (int t = 0; t <= kTicks; ++t) {
    const double t_s = axis_end_s * t / kTicks;
    const double x = x_of(t_s);
    out << "<line x1=\"" << num(x) << "\" y1=\"" << num(kTop) << "\" x2=\"" << num(x) << "\" y2=\""
        << num(axis_y) << "\" stroke=\"" << (t == 0 ? "black" : "#dddddd") << "\"/>\n";
    out << "<text x=\"" << num(x) << "\" y=\"" << num(axis_y + 16) << "\" text-anchor=\"middle\">"
        << time_label(t_s, axis_end_s) << "</text>\n";
  }
  out << "<line x1=\"" << num(kLeft) << "\" y1=\"" << num(axis_y) << "\" x2=\""
      << num(kLeft + plot_width) << "\" y2=\"" << num(axis_y) << "\" stroke=\"black\"/>\n";
  // Rows: the label, the idle background up to the last bar's end, the bars.
  for (std::size_t r = 0; r < timeline.rows.size(); ++r) {
    const TimelineRow& row = timeline.rows[r];
    const double y = kTop + kRowGap / 2 + static_cast<double>(r) * (kRowHeight + kRowGap);
    out << "<text x=\"" << num(kLeft - 8) << "\" y=\"" << num(y + kRowHeight / 2 + 4)
        << "\" text-anchor=\"end\">" << xml_escape(row.label) << "</text>\n";
    out << "<rect x=\"" << num(kLeft) << "\" y=\"" << num(y) << "\" width=\""
        << num(x_of(timeline.end_s) - kLeft) << "\" height=\"" << kRowHeight << "\" fill=\""
        << kIdle << "\"/>\n";
    for (const TimelineBar& bar : row.bars) {
      const double x0 = x_of(bar.start_s);
      const double w = std::max(x_of(bar.end_s) - x0, 0.5);
      const auto kind = static_cast<std::size_t>(bar.kind);
      const std::string& colour =
          kind < timeline.kinds.size() ? timeline.kinds[kind].colour : std::string("black");
      out << "<rect x=\"" << num(x0) << "\" y=\"" << num(y) << "\" width=\"" << num(w)
          << "\" height=\"" << kRowHeight << "\" fill=\"" << colour
          << "\" stroke=\"white\" stroke-width=\"0.5\"><title>" << xml_escape(bar.detail)
          << "</title></rect>\n";
      if (!bar.label.empty() && w >= kMinLabelWidth) {
        out << "<text x=\"" << num(x0 + w / 2) << "\" y=\"" << num(y + kRowHeight / 2 + 4)
            << "\" text-anchor=\"middle\" fill=\"white\" font-size=\"10\">" << xml_escape(bar.label)
            << "</text>\n";
      }
    }
  }
  // Legend along the bottom: each kind, then idle.
  double lx = kLeft;
  const double ly = axis_y + kAxisHeight + 8;
  auto legend = [&](const std::string& name, const std::string& colour) {
    out << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 10) << "\" width=\"12\" height=\"12\" "
        << "fill=\"" << colour << "\" stroke=\"#999999\" stroke-width=\"0.5\"/>\n";
    out << "<text x=\"" << num(lx + 18) << "\" y=\"" << num(ly) << "\">" << xml_escape(name)
        << "</text>\n";
    lx += 40 + 7.0 * static_cast<double>(name.size());
  };
  for (const TimelineKind& kind : timeline.kinds) legend(kind.name, kind.colour);
  legend("idle (bubble, waits)", kIdle);
  out << "</svg>\n";
}

}  // namespace parashift::tools
