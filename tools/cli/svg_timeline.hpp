// A small SVG timeline writer (no dependency): one row per track, bars of a
// few kinds on a shared time axis, idle time as the row's grey background,
// a legend. `simulate --svg` draws the critical replica's pipeline with it.
#pragma once

#include <ostream>
#include <string>
#include <vector>

namespace parashift::tools {

struct TimelineBar {
  double start_s = 0;
  double end_s = 0;
  int kind = 0;        // index into Timeline::kinds
  std::string label;   // drawn inside the bar when it fits ("3": micro-batch 3)
  std::string detail;  // the tooltip ("F3: forward of micro-batch 3")
};

struct TimelineRow {
  std::string label;  // left of the row ("stage 0")
  std::vector<TimelineBar> bars;
};

struct TimelineKind {
  std::string name;    // in the legend
  std::string colour;  // SVG colour
};

struct Timeline {
  std::string title;
  std::vector<TimelineKind> kinds;
  std::vector<TimelineRow> rows;
  double end_s = 0;  // the axis runs from 0 to at least this
};

/// Writes the whole SVG document. Deterministic: same timeline, same bytes.
void write_timeline_svg(std::ostream& out, const Timeline& timeline);

}  // namespace parashift::tools
