#include "tools/cli/topology_svg.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "tools/cli/format_number.hpp"
#include "tools/cli/svg_plot.hpp"

namespace parashift::tools {

namespace {

// Rows bottom to top: hosts, then each switch tier.
constexpr topo::NodeKind kTiers[] = {topo::NodeKind::Leaf, topo::NodeKind::Spine,
                                     topo::NodeKind::Core, topo::NodeKind::Router};
constexpr const char* kHostColour = "#4e79a7";
constexpr const char* kTierColours[] = {"#59a14f", "#f28e2b", "#e15759", "#b07aa1"};
// A switch of another kind with no host (a stray NIC or NVSwitch) is drawn
// with the leaves.
constexpr double kRowGap = 140, kMargin = 60, kTop = 70;

std::string num(double v) {
  return fmt("%.1f", v);
}

std::string bandwidth(double bytes_per_s) {
  return fmt("%.4g", bytes_per_s / 1e9) + " GB/s";
}

struct Box {
  std::string name;
  int row = 0;      // 0: hosts, 1..: switch tiers present, in kTiers order
  int colour = -1;  // -1: host, else index into kTierColours
  double x = 0, y = 0;
  std::string detail;  // tooltip
};

}  // namespace

TopologyDrawing write_topology_svg(std::ostream& out, const topo::Topology& t,
                                   const std::string& title) {
  // Boxes: one per host, one per switch (vertices with host -1).
  std::vector<int> box_of(static_cast<std::size_t>(t.node_count()), -1);
  std::vector<Box> boxes(static_cast<std::size_t>(t.host_count()));
  for (int h = 0; h < t.host_count(); ++h)
    boxes[static_cast<std::size_t>(h)].name = "host " + std::to_string(h);
  std::map<topo::NodeKind, std::vector<int>> tier_vertices;
  for (int v = 0; v < t.node_count(); ++v) {
    const topo::NodeInfo& n = t.node(v);
    if (n.host >= 0) {
      box_of[static_cast<std::size_t>(v)] = n.host;
    } else {
      const bool tier = std::find(std::begin(kTiers), std::end(kTiers), n.kind) != std::end(kTiers);
      tier_vertices[tier ? n.kind : topo::NodeKind::Leaf].push_back(v);
    }
  }
  int rows = 1;
  for (std::size_t k = 0; k < std::size(kTiers); ++k) {
    const auto it = tier_vertices.find(kTiers[k]);
    if (it == tier_vertices.end()) continue;
    for (int v : it->second) {
      box_of[static_cast<std::size_t>(v)] = static_cast<int>(boxes.size());
      boxes.push_back({t.node(v).name, rows, static_cast<int>(k), 0, 0,
                       std::string(topo::to_string(t.node(v).kind)) + " " + t.node(v).name});
    }
    ++rows;
  }
  // Connections between boxes: cables (directed links / 2) and bandwidth;
  // links inside a host go to its tooltip.
  struct Connection {
    int cables = 0;
    double bandwidth_Bps = 0;  // of one direction, summed over cables
  };
  std::map<std::pair<int, int>, Connection> connections;
  std::vector<std::map<std::string, int>> inside(static_cast<std::size_t>(t.host_count()));
  for (const auto& link : t.links()) {
    const int a = box_of[static_cast<std::size_t>(link.src)];
    const int b = box_of[static_cast<std::size_t>(link.dst)];
    if (a == b) {
      if (a < t.host_count() && link.src < link.dst) {
        // "gpu-nvswitch": the two kinds in name order, whichever was added first.
        std::string x(topo::to_string(t.node(link.src).kind));
        std::string y(topo::to_string(t.node(link.dst).kind));
        if (y < x) std::swap(x, y);
        ++inside[static_cast<std::size_t>(a)][x + "-" + y + " at " + bandwidth(link.bandwidth_Bps)];
      }
      continue;
    }
    if (a > b) continue;  // each cable once, from its lower box
    Connection& c = connections[{a, b}];
    ++c.cables;
    c.bandwidth_Bps += link.bandwidth_Bps;
  }
  for (int h = 0; h < t.host_count(); ++h) {
    Box& box = boxes[static_cast<std::size_t>(h)];
    box.detail = box.name + ": " + std::to_string(t.gpus_per_host()) + " GPUs";
    for (const auto& [kind, count] : inside[static_cast<std::size_t>(h)]) {
      box.detail += "; " + std::to_string(count) + " x " + kind;
    }
  }
  // Layout: each row's boxes spread evenly over the widest row's width.
  std::vector<int> per_row(static_cast<std::size_t>(rows), 0);
  for (const auto& b : boxes) ++per_row[static_cast<std::size_t>(b.row)];
  const int widest = *std::max_element(per_row.begin(), per_row.end());
  const double cell = widest > 256 ? 6 : widest > 64 ? 12 : 28;
  const double width = std::max(900.0, 2 * kMargin + cell * widest);
  const double height = kTop + kRowGap * (rows - 1) + 90;
  std::vector<int> placed(static_cast<std::size_t>(rows), 0);
  for (auto& b : boxes) {
    const auto r = static_cast<std::size_t>(b.row);
    const double span = width - 2 * kMargin;
    b.x = kMargin + span * (placed[r]++ + 0.5) / per_row[r];
    b.y = kTop + kRowGap * (rows - 1 - b.row);
  }
  const double box_w = std::max(3.0, cell * 0.7), box_h = 16;

  out << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << num(width) << "\" height=\""
      << num(height) << "\" viewBox=\"0 0 " << num(width) << " " << num(height)
      << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  out << "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  out << "<text x=\"" << num(width / 2) << "\" y=\"25\" text-anchor=\"middle\" font-size=\"15\">"
      << xml_escape(title) << "</text>\n";
  // Lines first, boxes over them.
  out << "<g stroke=\"#999999\" stroke-opacity=\"0.6\">\n";
  for (const auto& [pair, c] : connections) {
    const Box& a = boxes[static_cast<std::size_t>(pair.first)];
    const Box& b = boxes[static_cast<std::size_t>(pair.second)];
    out << "<line x1=\"" << num(a.x) << "\" y1=\"" << num(a.y) << "\" x2=\"" << num(b.x)
        << "\" y2=\"" << num(b.y) << "\"><title>" << xml_escape(a.name) << " - "
        << xml_escape(b.name) << ": " << c.cables << " cable" << (c.cables > 1 ? "s" : "") << ", "
        << bandwidth(c.bandwidth_Bps) << " each way</title></line>\n";
  }
  out << "</g>\n";
  for (const auto& b : boxes) {
    const char* colour = b.colour < 0 ? kHostColour : kTierColours[b.colour];
    out << "<rect x=\"" << num(b.x - box_w / 2) << "\" y=\"" << num(b.y - box_h / 2)
        << "\" width=\"" << num(box_w) << "\" height=\"" << num(box_h) << "\" fill=\"" << colour
        << "\"><title>" << xml_escape(b.detail) << "</title></rect>\n";
  }
  // Row labels and legend.
  std::vector<std::string> row_names = {"hosts (" + std::to_string(t.host_count()) + ")"};
  std::vector<const char*> row_colours = {kHostColour};
  for (std::size_t k = 0; k < std::size(kTiers); ++k) {
    const auto it = tier_vertices.find(kTiers[k]);
    if (it == tier_vertices.end()) continue;
    row_names.push_back(std::string(topo::to_string(kTiers[k])) + " (" +
                        std::to_string(it->second.size()) + ")");
    row_colours.push_back(kTierColours[k]);
  }
  for (int r = 0; r < rows; ++r) {
    const double y = kTop + kRowGap * (rows - 1 - r);
    out << "<text x=\"6\" y=\"" << num(y - box_h) << "\" fill=\""
        << row_colours[static_cast<std::size_t>(r)] << "\">"
        << xml_escape(row_names[static_cast<std::size_t>(r)]) << "</text>\n";
  }
  out << "</svg>\n";
  return {t.host_count(), static_cast<int>(boxes.size()) - t.host_count(),
          static_cast<int>(connections.size())};
}

}  // namespace parashift::tools
