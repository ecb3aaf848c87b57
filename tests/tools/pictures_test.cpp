// topo --svg and faults --svg: what each picture holds, counted from the
// generator's and campaign's own numbers (tests/tools/svg_render_test.sh
// renders them to PNG).
#include <doctest/doctest.h>

#include <string>

#include "cli_harness.hpp"

using parashift::test::read_text_file;
using parashift::test::run_parashift;
using parashift::test::temp_file_path;

namespace {

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (auto at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

}  // namespace

TEST_CASE("topo --svg: a box per host and switch, a line per connected pair") {
  const std::string path = temp_file_path("topo-4.svg");
  const auto r = run_parashift({"topo", "rail-fat-tree", "--param", "nodes=4", "--svg", path});
  REQUIRE(r.status == 0);
  const std::string svg = read_text_file(path);
  // rail-fat-tree, 4 nodes (topo's own description): 4 hosts of 8 GPUs, 8
  // leaves (one per rail), 32 spines: 44 boxes and the white background.
  CHECK(count(svg, "<rect") == 1 + 4 + 8 + 32);
  // Each host's 8 NICs to the 8 rail leaves: 4 x 8 pairs; every leaf to every
  // spine: 8 x 32. 32 + 256 = 288 lines, the GPU-NVSwitch-NIC links inside hosts none.
  CHECK(count(svg, "<line") == 288);
  CHECK(svg.find(">hosts (4)<") != std::string::npos);
  CHECK(svg.find(">spine (32)<") != std::string::npos);
  // A host's tooltip counts its internal links: 8 GPU-NVSwitch cables at 450 GB/s.
  CHECK(svg.find("<title>host 0: 8 GPUs; ") != std::string::npos);
  CHECK(svg.find("8 x gpu-nvswitch at 450 GB/s") != std::string::npos);
  CHECK(svg.find("1 cable, 50 GB/s each way</title>") != std::string::npos);
}

TEST_CASE("faults --svg: three panels, each with both policies") {
  const std::string path = temp_file_path("campaign.svg");
  const auto r = run_parashift(
      {"faults", std::string(PARASHIFT_SOURCE_DIR) + "/scenarios/faults-llama3-405b-16k.yaml",
       "--seeds", "2", "--days", "1", "--svg", path});
  REQUIRE(r.status == 0);
  const std::string svg = read_text_file(path);
  CHECK(count(svg, "<svg y=") == 3);
  CHECK(svg.find("time lost to failures (2 seeds x 1 days)") != std::string::npos);
  CHECK(svg.find(">lost work per interruption<") != std::string::npos);
  CHECK(svg.find(">recovery time per interruption<") != std::string::npos);
  // Two series a panel: 2 x 6 points, and a legend entry each.
  CHECK(count(svg, "<circle") == 3 * 2 * 6);
  CHECK(count(svg, ">snapshot</text>") == 3);
  CHECK(count(svg, ">baseline</text>") == 3);
}

TEST_CASE("an --svg path that cannot be written is refused before the work") {
  const auto r = run_parashift(
      {"topo", "rail-fat-tree", "--param", "nodes=4", "--svg", "/nonexistent-dir/t.svg"});
  CHECK(r.status == 3);
  CHECK(r.out.empty());  // nothing described: refused first
  CHECK(r.err.find("/nonexistent-dir/t.svg") != std::string::npos);
}
