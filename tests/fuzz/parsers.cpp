#include "tests/fuzz/parsers.hpp"

#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "core/scenario/hf_config.hpp"
#include "core/scenario/scenario.hpp"
#include "core/validation/csv_reader.hpp"
#include "core/validation/validation_report.hpp"
#include "hw/calib/calibration.hpp"
#include "sim/faults/failure_events.hpp"
#include "tests/temp_dir.hpp"
#include "topologies/topology.hpp"

namespace parashift::fuzz {

namespace {

std::filesystem::path write_input(const std::string& name, const std::string& text) {
  const auto path = std::filesystem::path(scratch_dir()) / name;
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  return path;
}

void scenario(const std::string& text) {
  (void)core::parse_scenario(text, std::filesystem::path(scratch_dir()) / "fuzz.yaml");
}

void dot(const std::string& text) {
  (void)topo::load_topology(write_input("fuzz.dot", text));
}

void graphml(const std::string& text) {
  (void)topo::load_topology(write_input("fuzz.graphml", text));
}

void published_csv(const std::string& text) {
  (void)core::validate_csv_table(core::parse_csv(text, "fuzz.csv"), "fuzz.csv");
}

void hf_config(const std::string& text) {
  (void)core::parse_hf_config(text, "config.json");
}

// Against a 2-node rail fat-tree: 16 GPUs, 2 hosts and its fabric cables.
void failure_trace(const std::string& text) {
  static const topo::Topology topology = topo::generate_topology(
      "rail-fat-tree", {{"node", "dgx-h100"}, {"nodes", "2"}, {"tiers", "2"}});
  static const sim::FailureTargets targets{16, 2, sim::fabric_links(topology)};
  (void)sim::read_failure_trace(write_input("trace.csv", text).string(), targets, topology);
}

void calibration(const std::string& text) {
  (void)hw::load_calibrated_device(write_input("profile.json", text));
}

}  // namespace

const std::vector<Parser>& parsers() {
  static const std::vector<Parser> table{
      {"scenario", "fuzz.yaml", scenario},          {"dot", "fuzz.dot", dot},
      {"graphml", "fuzz.graphml", graphml},         {"published_csv", "fuzz.csv", published_csv},
      {"hf_config", "config.json", hf_config},      {"failure_trace", "trace.csv", failure_trace},
      {"calibration", "profile.json", calibration},
  };
  return table;
}

const Parser& parser(std::string_view name) {
  for (const Parser& p : parsers()) {
    if (p.name == name) return p;
  }
  throw std::invalid_argument("no fuzzed parser named " + std::string(name));
}

const std::string& scratch_dir() {
  static const std::string dir = test::process_temp_dir().path().string();
  return dir;
}

}  // namespace parashift::fuzz
