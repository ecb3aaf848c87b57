#include "tools/cli/svg_plot.hpp"

#include <algorithm>
#include <cmath>

#include "tools/cli/format_number.hpp"

namespace parashift::tools {

namespace {

constexpr int kTicks = 5;
constexpr double kWidth = 900, kHeight = 500;
// Tableau 10: distinct, and readable on white.
constexpr const char* kColours[] = {"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr std::size_t kLegendRows = 20;

std::string num(double v) {
  return fmt("%.1f", v);
}

// "1.5M", "250k", "12": short labels for tick values.
std::string tick_label(double v) {
  const double a = std::abs(v);
  if (a >= 1e9) return fmt("%.4g", v / 1e9) + "G";
  if (a >= 1e6) return fmt("%.4g", v / 1e6) + "M";
  if (a >= 1e4) return fmt("%.4g", v / 1e3) + "k";
  return fmt("%.4g", v);
}

}  // namespace

std::string xml_escape(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

double svg_y(const PlotArea& area, double y, double y_max) {
  return area.top + area.height * (1.0 - y / y_max);
}

double svg_x(const PlotArea& area, std::size_t i, std::size_t n) {
  return area.left + area.width * (static_cast<double>(i) + 0.5) / static_cast<double>(n);
}

double nice_y_max(const LinePlot& plot, int ticks) {
  double top = 0;
  for (const auto& s : plot.series) {
    for (const auto& y : s.y) {
      if (y) top = std::max(top, *y);
    }
  }
  return nice_ceiling(top, ticks);
}

double nice_ceiling(double top, int ticks) {
  if (!(top > 0)) return 1;
  const double raw_step = top / ticks;
  const double magnitude = std::pow(10.0, std::floor(std::log10(raw_step)));
  for (const double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * magnitude >= raw_step) return m * magnitude * ticks;
  }
  return 10 * magnitude * ticks;
}

namespace {

// One plot's elements, in a kWidth x kHeight frame.
void write_plot(std::ostream& out, const LinePlot& plot) {
  const PlotArea area;
  const double y_max = nice_y_max(plot, kTicks);
  const std::size_t n = std::max<std::size_t>(plot.x_ticks.size(), 1);
  out << "<text x=\"" << num(area.left + area.width / 2) << "\" y=\"25\" text-anchor=\"middle\" "
      << "font-size=\"15\">" << xml_escape(plot.title) << "</text>\n";
  // Horizontal grid lines and y tick labels.
  for (int t = 0; t <= kTicks; ++t) {
    const double v = y_max * t / kTicks;
    const double y = svg_y(area, v, y_max);
    out << "<line x1=\"" << num(area.left) << "\" y1=\"" << num(y) << "\" x2=\""
        << num(area.left + area.width) << "\" y2=\"" << num(y) << "\" stroke=\""
        << (t == 0 ? "black" : "#dddddd") << "\"/>\n";
    out << "<text x=\"" << num(area.left - 6) << "\" y=\"" << num(y + 4)
        << "\" text-anchor=\"end\">" << tick_label(v) << "</text>\n";
  }
  out << "<line x1=\"" << num(area.left) << "\" y1=\"" << num(area.top) << "\" x2=\""
      << num(area.left) << "\" y2=\"" << num(area.top + area.height) << "\" stroke=\"black\"/>\n";
  // X categories.
  for (std::size_t i = 0; i < plot.x_ticks.size(); ++i) {
    out << "<text x=\"" << num(svg_x(area, i, n)) << "\" y=\"" << num(area.top + area.height + 18)
        << "\" text-anchor=\"middle\">" << xml_escape(plot.x_ticks[i]) << "</text>\n";
  }
  out << "<text x=\"" << num(area.left + area.width / 2) << "\" y=\""
      << num(area.top + area.height + 40) << "\" text-anchor=\"middle\">"
      << xml_escape(plot.x_label) << "</text>\n";
  out << "<text x=\"20\" y=\"" << num(area.top + area.height / 2)
      << "\" text-anchor=\"middle\" transform=\"rotate(-90 20 " << num(area.top + area.height / 2)
      << ")\">" << xml_escape(plot.y_label) << "</text>\n";
  // One polyline per unbroken run of a series, a dot per point.
  for (std::size_t s = 0; s < plot.series.size(); ++s) {
    const PlotSeries& series = plot.series[s];
    const char* colour = kColours[s % std::size(kColours)];
    std::string points;
    auto flush = [&] {
      if (!points.empty()) {
        out << "<polyline fill=\"none\" stroke=\"" << colour << "\" stroke-width=\"2\" points=\""
            << points << "\"/>\n";
      }
      points.clear();
    };
    for (std::size_t i = 0; i < series.y.size() && i < n; ++i) {
      if (!series.y[i]) {
        flush();
        continue;
      }
      const double x = svg_x(area, i, n), y = svg_y(area, *series.y[i], y_max);
      points += (points.empty() ? "" : " ") + num(x) + "," + num(y);
      out << "<circle cx=\"" << num(x) << "\" cy=\"" << num(y) << "\" r=\"3\" fill=\"" << colour
          << "\"/>\n";
    }
    flush();
  }
  // Legend on the right.
  const double lx = area.left + area.width + 20;
  for (std::size_t s = 0; s < plot.series.size() && s < kLegendRows; ++s) {
    const double ly = area.top + 10 + 18.0 * static_cast<double>(s);
    out << "<rect x=\"" << num(lx) << "\" y=\"" << num(ly - 9) << "\" width=\"12\" height=\"12\" "
        << "fill=\"" << kColours[s % std::size(kColours)] << "\"/>\n";
    out << "<text x=\"" << num(lx + 18) << "\" y=\"" << num(ly + 2) << "\">"
        << xml_escape(plot.series[s].label) << "</text>\n";
  }
  if (plot.series.size() > kLegendRows) {
    out << "<text x=\"" << num(lx) << "\" y=\""
        << num(area.top + 10 + 18.0 * static_cast<double>(kLegendRows)) << "\">... "
        << plot.series.size() - kLegendRows << " more</text>\n";
  }
}

void open_svg(std::ostream& out, double height) {
  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << kWidth << "\" height=\"" << height
      << "\" viewBox=\"0 0 " << kWidth << " " << height
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
}

}  // namespace

void write_svg(std::ostream& out, const LinePlot& plot) {
  open_svg(out, kHeight);
  write_plot(out, plot);
  out << "</svg>\n";
}

void write_svg_panels(std::ostream& out, const std::vector<LinePlot>& plots) {
  open_svg(out, kHeight * static_cast<double>(plots.size()));
  for (std::size_t i = 0; i < plots.size(); ++i) {
    out << "<svg y=\"" << num(kHeight * static_cast<double>(i)) << "\" width=\"" << kWidth
        << "\" height=\"" << kHeight << "\">\n";
    write_plot(out, plots[i]);
    out << "</svg>\n";
  }
  out << "</svg>\n";
}

}  // namespace parashift::tools
