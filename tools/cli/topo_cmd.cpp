#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/input_error.hpp"
#include "tools/cli/command.hpp"
#include "tools/cli/output_file.hpp"
#include "tools/cli/output_path.hpp"
#include "tools/cli/topology_svg.hpp"
#include "topologies/topology.hpp"

namespace parashift::tools {

namespace {

struct TopoOptions {
  std::string source;
  std::vector<std::string> params;
  std::string dot_path;
  std::string svg_path;
};

topo::Topology build(const TopoOptions& opts) {
  const std::filesystem::path path(opts.source);
  const std::string ext = path.extension().string();
  if (ext == ".dot" || ext == ".gv" || ext == ".graphml" || std::filesystem::exists(path)) {
    if (!opts.params.empty()) {
      throw core::InputError("--param applies to generators, not to the file " + opts.source);
    }
    return topo::load_topology(path);
  }
  std::map<std::string, std::string> params;
  for (const auto& p : opts.params) {
    const auto eq = p.find('=');
    if (eq == std::string::npos || eq == 0) {
      throw core::InputError("--param " + p + ": expected key=value");
    }
    params[p.substr(0, eq)] = p.substr(eq + 1);
  }
  return topo::generate_topology(opts.source, params);
}

void describe(std::ostream& out, const topo::Topology& t, const std::string& source) {
  std::map<std::string, int> kinds;
  for (int v = 0; v < t.node_count(); ++v) ++kinds[std::string(topo::to_string(t.node(v).kind))];
  std::map<double, int> bandwidths;
  for (const auto& link : t.links()) ++bandwidths[link.bandwidth_Bps];
  out << "topology   " << source << "\n";
  out << "GPUs       " << t.gpu_count() << " on " << t.host_count() << " hosts ("
      << t.gpus_per_host() << " per host)\n";
  out << "vertices   " << t.node_count() << ":";
  for (const auto& [kind, n] : kinds) out << " " << n << " " << kind;
  out << "\nlinks      " << t.link_count() << " directed:";
  for (const auto& [bw, n] : bandwidths) out << " " << n << " x " << bw / 1e9 << " GB/s";
  out << "\n";
  if (t.gpu_count() > 1) {
    const int last = t.gpu_count() - 1;
    out << "route      gpu 0 -> gpu " << last << ": " << t.route(0, last).size() << " links\n";
  }
}

}  // namespace

void add_topo_command(CLI::App& app, CliContext& ctx) {
  auto opts = std::make_shared<TopoOptions>();
  CLI::App* cmd = app.add_subcommand(
      "topo",
      "Build a topology from a file (.dot, .graphml) or a generator, describe it, and "
      "optionally write it as Graphviz DOT");
  cmd->add_option(
         "source", opts->source,
         "Topology file, or a generator name (" +
             [] {
               std::string names;
               for (const auto& n : topo::generator_names())
                 names += (names.empty() ? "" : ", ") + n;
               return names;
             }() +
             ")")
      ->required();
  cmd->add_option("--param", opts->params,
                  "Generator parameter, e.g. --param nodes=16 (repeatable)")
      ->type_name("KEY=VALUE")
      ->allow_extra_args(false);
  cmd->add_option("--dot", opts->dot_path, "Write the topology as DOT to FILE ('-' for stdout)")
      ->type_name("FILE");
  cmd->add_option("--svg", opts->svg_path,
                  "Draw the topology as SVG to FILE without Graphviz: hosts, then each switch "
                  "tier, one line per connected pair (tooltips: cables, bandwidth)")
      ->type_name("FILE");
  cmd->footer(
      "Examples:\n"
      "  parashift topo rail-fat-tree --param nodes=32 --param oversubscription=2\n"
      "  parashift topo topologies/h100-1k.dot --svg h100-1k.svg\n"
      "  parashift topo topologies/h100-1k.dot --dot - | dot -Tsvg > h100-1k-graphviz.svg");
  cmd->callback([opts, &ctx] {
    check_output_path("--dot", opts->dot_path);
    check_output_path("--svg", opts->svg_path);
    const topo::Topology t = build(*opts);
    if (!opts->svg_path.empty()) {
      std::ofstream file = open_output_file(opts->svg_path);
      write_topology_svg(file, t, opts->source + ": " + std::to_string(t.gpu_count()) + " GPUs");
    }
    if (opts->dot_path == "-") {
      topo::write_dot(t, ctx.out);
      return;
    }
    describe(ctx.out, t, opts->source);
    if (!opts->dot_path.empty()) {
      std::ofstream file = open_output_file(opts->dot_path);
      topo::write_dot(t, file);
    }
  });
}

}  // namespace parashift::tools
