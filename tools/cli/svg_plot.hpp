// A small SVG line-plot writer (no dependency): categories on the x axis,
// one line per series, a linear y axis from 0, a legend. Opens in a browser.
#pragma once

#include <optional>
#include <ostream>
#include <string>
#include <vector>

namespace parashift::tools {

struct PlotSeries {
  std::string label;
  /// One value per x category; a missing one breaks the line there.
  std::vector<std::optional<double>> y;
};

struct LinePlot {
  std::string title;
  std::string x_label;
  std::string y_label;
  std::vector<std::string> x_ticks;  // the categories, left to right
  std::vector<PlotSeries> series;
};

/// The plot area inside the picture, in SVG user units (pixels).
struct PlotArea {
  double left = 90, top = 50, width = 560, height = 380;
};

/// Maps y in [0, y_max] onto the area, y_max at the top. y_max > 0.
double svg_y(const PlotArea& area, double y, double y_max);
/// The centre of category `i` of `n`.
double svg_x(const PlotArea& area, std::size_t i, std::size_t n);

/// A round upper bound of the data for the y axis (1, 2 or 5 x 10^k, times
/// the tick count), so ticks fall on readable values; 1 when there is no data.
double nice_y_max(const LinePlot& plot, int ticks);
/// The same bound for a largest value `top` (1 when top <= 0): the axis end,
/// `ticks` steps of 1, 2 or 5 x 10^k.
double nice_ceiling(double top, int ticks);

/// Writes the whole SVG document. Deterministic: same plot, same bytes.
void write_svg(std::ostream& out, const LinePlot& plot);
/// One document with the plots stacked top to bottom.
void write_svg_panels(std::ostream& out, const std::vector<LinePlot>& plots);

/// `text` with &, <, >, " escaped for XML.
std::string xml_escape(const std::string& text);

}  // namespace parashift::tools
