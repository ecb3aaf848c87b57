// parashift_topogen: write a generated topology as DOT.
//   parashift_topogen GENERATOR [key=value ...] [-o FILE]
//   parashift_topogen --list
// Exit status 0 on success, 2 on bad input.
#include <fstream>
#include <iostream>
#include <map>
#include <string>

#include "topologies/generators.hpp"
#include "topologies/topology.hpp"

namespace {

int usage(std::ostream& out, int status) {
  out << "usage: parashift_topogen GENERATOR [key=value ...] [-o FILE]\n"
         "       parashift_topogen --list\n";
  return status;
}

void list_generators(std::ostream& out) {
  for (const auto& g : parashift::topo::generator_catalog()) {
    out << g.name << ": " << g.summary << '\n';
    for (const auto& p : g.params) {
      out << "  " << p.name << " ("
          << (p.default_value.empty() ? "required" : "default " + p.default_value)
          << "): " << p.meaning << '\n';
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) return usage(std::cerr, 2);
  const std::string first = argv[1];
  if (first == "--list") {
    list_generators(std::cout);
    return 0;
  }
  if (first == "-h" || first == "--help") return usage(std::cout, 0);
  std::map<std::string, std::string> params;
  std::string output;
  for (int i = 2; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "-o" && i + 1 < argc) {
      output = argv[++i];
      continue;
    }
    const auto eq = arg.find('=');
    if (eq == std::string::npos || eq == 0) {
      std::cerr << "parashift_topogen: argument '" << arg << "': expected key=value or -o FILE\n";
      return 2;
    }
    params[arg.substr(0, eq)] = arg.substr(eq + 1);
  }
  try {
    const auto topology = parashift::topo::generate_topology(first, params);
    if (output.empty()) {
      parashift::topo::write_dot(topology, std::cout);
    } else {
      std::ofstream out(output);
      if (!out) {
        std::cerr << "parashift_topogen: cannot write '" << output << "'\n";
        return 2;
      }
      parashift::topo::write_dot(topology, out);
    }
    std::cerr << first << ": " << topology.gpu_count() << " GPUs on " << topology.host_count()
              << " hosts, " << topology.node_count() << " nodes, " << topology.link_count()
              << " links\n";
  } catch (const parashift::topo::TopologyError& e) {
    std::cerr << "parashift_topogen: " << e.what() << '\n';
    return 2;
  }
  return 0;
}
